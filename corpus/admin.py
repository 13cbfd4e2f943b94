"""Documents (metadata, and chunk text through the tenant scope) and uploads in the console.

A member sees the documents of their audiences only, and the ingest jobs that wrote only into
them; only a tenant admin (role owner) or a superuser uploads, into audiences they hold, and
archives, restores or deletes documents within them (corpus/ingest/lifecycle.py; tenants/staff.py,
docs/decisions/0033 and 0056)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.views.main import ChangeList
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from psycopg import sql

from corpus.ingest.flow import SOURCE_TYPES
from corpus.sources.jobs import UploadRejected, ingest_job_create, ingest_job_shown
from corpus.ingest.lifecycle import (DocumentNotFound, LifecycleOutcome, LifecycleRefused, contested_document_ids,
                              document_archive, document_delete, document_restore, document_state)
from corpus.models import Document, IngestJob
from corpus.ingest.origin import source_url
from tenants.admin import TenantScopedAdmin
from tenants.models import Tenant
from tenants.scope import ChunkQuery, TenantScope
from tenants import staff
from tenants.staff import staff_access

LifecycleAction = Callable[..., LifecycleOutcome]

def document_chunks(*, document: Document, audience_ids: Sequence[int]) -> list[dict[str, Any]]:
    """A document's chunks in order, read through the tenant scope (archived ones too)."""
    if document.audience_id not in audience_ids:
        return []
    scope = TenantScope(tenant_id=document.tenant_id, audience_ids=tuple(sorted(audience_ids)), include_archived=True)
    return scope.fetch(ChunkQuery(
        select=sql.SQL("c.id, c.ordinal, c.heading_path, c.content, c.page, c.token_count, c.contested"),
        where=sql.SQL("c.document_id = %(document)s"), order_by=sql.SQL("c.ordinal"),
        params={"document": document.pk},
    ))


# The document states as the console shows them (corpus.ingest.lifecycle keeps the English keys).
STATE_LABELS = {"live": gettext_lazy("live"), "archived": gettext_lazy("archived"),
                "superseded": gettext_lazy("superseded"), "contested": gettext_lazy("contested")}


class DocumentChangeList(ChangeList):
    """The page's documents with their contested flag, read per tenant on the page in one
    scoped chunk query (chunk rows pass row-level security only for one tenant at a time, so a
    subquery in the list's own statement would see none): no query per row."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        access = staff_access(request)
        by_tenant: dict[int, list[int]] = defaultdict(list)
        for document in self.result_list:
            by_tenant[document.tenant_id].append(document.pk)
        contested: set[int] = set()
        for tenant_id, ids in by_tenant.items():
            contested |= contested_document_ids(tenant_id=tenant_id, audience_ids=access.audience_ids(tenant_id),
                                                document_ids=ids)
        for document in self.result_list:
            document.contested = document.pk in contested


class AudienceListFilter(admin.AllValuesFieldListFilter):
    """The audience filter, titled by what it filters (Django titles a lookup by its last field:
    "By slug"); its choices are the slugs of the documents the member sees (the admin's queryset)."""

    def __init__(self, field: Any, request: HttpRequest, params: Any, model: Any, model_admin: Any,
                 field_path: str) -> None:
        super().__init__(field, request, params, model, model_admin, field_path)
        self.title = gettext_lazy("audience")


@admin.register(Document)
class DocumentAdmin(TenantScopedAdmin):
    """Document metadata, state and origin; archive, restore and delete for tenant admins
    (corpus.ingest.lifecycle). Chunk text stays behind the tenant scope and is not listed here."""

    audience_field, audience_single = "audience_id", True
    list_display = ["slug", "title", "tenant", "source_type", "audience_slug", "state", "chunk_count",
                    "last_ingested", "origin_display"]
    list_filter = ["tenant", "source_type", "status", "origin", ("audience__slug", AudienceListFilter)]
    search_fields = ["slug", "title"]
    readonly_fields = [f.name for f in Document._meta.fields]
    list_select_related = ["tenant", "audience"]
    actions = ["archive_documents", "restore_documents", "delete_documents"]

    change_form_template = "admin/corpus/document/change_form.html"
    change_list_template = "admin/corpus/document/change_list.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # documents arrive through ingest, which keeps chunks and hashes consistent

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return DocumentChangeList

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> Any:
        document = self.get_object(request, object_id)
        context = dict(extra_context or {})
        if document is not None:
            audiences = tuple(sorted(staff_access(request).audience_ids(document.tenant_id)))
            context["chunks_visible"] = document.audience_id in audiences
            context["chunks"] = document_chunks(document=document, audience_ids=audiences)
        return super().change_view(request, object_id, form_url, context)

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        # Uploads are ingest jobs (IngestJobAdmin): the button is here, where documents are looked for.
        jobs = self.admin_site._registry.get(IngestJob)
        may_upload = jobs is not None and jobs.has_add_permission(request) and (
            staff_access(request).superuser or bool(staff_access(request).admin_tenant_ids()))
        return super().changelist_view(request, {**(extra_context or {}), "may_upload": may_upload})

    def has_delete_permission(self, request: HttpRequest, obj: Document | None = None) -> bool:
        return False  # Django's own delete skips chunks and statistics: the delete action is corpus.ingest.lifecycle's

    def has_lifecycle_permission(self, request: HttpRequest) -> bool:
        return bool(staff_access(request).admin_tenant_ids())

    # -- columns -------------------------------------------------------------------------
    @admin.display(description=gettext_lazy("audience"), ordering="audience__slug")
    def audience_slug(self, obj: Document) -> str:
        return obj.audience.slug

    @admin.display(description=gettext_lazy("status"))
    def state(self, obj: Document) -> str:
        state = str(STATE_LABELS.get(document_state(obj), document_state(obj)))
        return f"{state}, {STATE_LABELS['contested']}" if getattr(obj, "contested", False) else state

    @admin.display(description=gettext_lazy("last ingested"), ordering="updated_at")
    def last_ingested(self, obj: Document) -> Any:
        return obj.updated_at

    @admin.display(description=gettext_lazy("origin"), ordering="origin")
    def origin_display(self, obj: Document) -> str:
        url = source_url(origin=obj.origin, ref=obj.origin_ref)
        if url:
            return format_html('{}: <a href="{}" rel="noopener noreferrer">{}</a>', obj.get_origin_display(), url, url)
        return format_html("{}: {}", obj.get_origin_display(), obj.origin_ref or "—")

    # -- actions -------------------------------------------------------------------------
    @admin.action(description=gettext_lazy("Archive the selected documents (out of search)"), permissions=["lifecycle"])
    def archive_documents(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        self._apply(request, queryset, document_archive)

    @admin.action(description=gettext_lazy("Restore the selected documents (back into search)"),
                  permissions=["lifecycle"])
    def restore_documents(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        self._apply(request, queryset, document_restore)

    @admin.action(description=gettext_lazy("Delete the selected documents and their chunks"), permissions=["lifecycle"])
    def delete_documents(self, request: HttpRequest, queryset: QuerySet[Document]) -> Any:
        if request.POST.get("confirm") != "yes":
            return TemplateResponse(request, "admin/corpus/document/delete_documents.html", {
                **self.admin_site.each_context(request), "title": _("Delete documents"), "opts": self.model._meta,
                "documents": list(queryset), "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            })
        self._apply(request, queryset, document_delete)
        return None

    def _apply(self, request: HttpRequest, queryset: QuerySet[Document], action: LifecycleAction) -> None:
        """One lifecycle call (one transaction) per tenant among the selected rows; the queryset
        holds only rows within the member's audiences, and only tenant admins act."""
        access = staff_access(request)
        by_tenant: dict[int, list[int]] = defaultdict(list)
        for tenant_id, pk in queryset.values_list("tenant_id", "pk"):
            by_tenant[tenant_id].append(pk)
        for tenant_id, ids in sorted(by_tenant.items()):
            tenant = Tenant.objects.get(pk=tenant_id)
            if not access.is_admin(tenant_id):
                messages.error(request, _("%(tenant)s: only a tenant admin archives, restores or deletes documents.")
                               % {"tenant": tenant.slug})
                continue
            try:
                outcome = action(tenant=tenant, document_ids=ids, audience_ids=access.audience_ids(tenant_id))
            except (LifecycleRefused, DocumentNotFound) as exc:
                messages.error(request, f"{tenant.slug}: {exc}")
                continue
            messages.info(request, _outcome_message(tenant.slug, outcome))


def _outcome_message(tenant_slug: str, outcome: LifecycleOutcome) -> str:
    done, already = {
        "archive": (_("%(tenant)s: %(documents)d document(s) archived, %(chunks)d chunk(s)"),
                    _("%(count)d already archived")),
        "restore": (_("%(tenant)s: %(documents)d document(s) restored, %(chunks)d chunk(s)"),
                    _("%(count)d already restored")),
        "delete": (_("%(tenant)s: %(documents)d document(s) deleted, %(chunks)d chunk(s)"),
                   _("%(count)d already deleted")),
    }[outcome.action]
    text = done % {"tenant": tenant_slug, "documents": len(outcome.changed), "chunks": len(outcome.chunk_ids)}
    if outcome.unchanged:
        text += "; " + already % {"count": len(outcome.unchanged)}
    if outcome.released:
        text += "; " + _("%(count)d document(s) they superseded stay archived and can be restored") % {
            "count": len(outcome.released)}
    return text + "."


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        files = data if isinstance(data, (list, tuple)) else [data]
        return [super(MultipleFileField, self).clean(item, initial) for item in files if item]


class UploadForm(forms.ModelForm):
    files = MultipleFileField(  # type: ignore[assignment]  # a declared field: the form metaclass moves it, BaseForm.files stays
        help_text=gettext_lazy("Markdown, HTML, PDF, text, or a changelog/tickets JSON or CSV file."))
    audience = forms.ChoiceField(choices=(), label=gettext_lazy("Audience"),
                                 help_text=gettext_lazy("Who may read the documents: an audience you hold."))
    source_type = forms.ChoiceField(choices=[(s, s) for s in SOURCE_TYPES], initial="doc")
    # Set per request on a class made per call (IngestJobAdmin.get_form), never on this shared one.
    held_slugs: dict[int, frozenset[str]] = {}

    class Meta:
        model = IngestJob
        fields = ["tenant", "audience", "source_type"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        slugs = sorted(set().union(*self.held_slugs.values())) if self.held_slugs else []
        field = self.fields["audience"]
        assert isinstance(field, forms.ChoiceField)  # declared above
        field.choices = [(s, s) for s in slugs]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        tenant, audience = cleaned.get("tenant"), cleaned.get("audience")
        if tenant is not None and audience and audience not in self.held_slugs.get(tenant.pk, frozenset()):
            raise forms.ValidationError(_("You do not hold the audience %(audience)s of %(tenant)s: uploads go only "
                                          "into audiences you hold.") % {"audience": repr(audience),
                                                                         "tenant": tenant.slug})
        return cleaned


@admin.register(IngestJob)
class IngestJobAdmin(TenantScopedAdmin):
    """Upload files to ingest in the background; each job shows its status and its report.

    A job is visible when every audience it could write into (the writer's) and its default
    audience are the member's; uploading is for tenant admins."""

    audience_field, audience_key = "writer_audiences", "slug"
    admin_writes = True
    list_display = ["id", "tenant", "status", "source_type", "audience", "file_count", "summary", "created_at",
                    "finished_at"]
    list_filter = ["tenant", "status", "source_type"]
    list_select_related = ["tenant"]
    readonly_fields = ["tenant", "status", "audience", "source_type", "file_names", "report_display",
                       "error_display", "task_id", "created_by", "created_at", "started_at", "finished_at"]
    exclude = ["report", "upload_dir", "error"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[IngestJob]:
        access = staff_access(request)
        return super().get_queryset(request).filter(staff.within_audiences(access, field="audience", key="slug",
                                                                           single=True))

    def get_form(self, request: HttpRequest, obj: IngestJob | None = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is not None:
            return super().get_form(request, obj, change=change, **kwargs)
        kwargs["form"] = UploadForm
        kwargs["fields"] = ["tenant", "audience", "source_type", "files"]
        form = super().get_form(request, obj, change=change, **kwargs)
        assert issubclass(form, UploadForm)  # Django's factory subclasses the form given
        access = staff_access(request)
        form.held_slugs = {t: access.audience_slugs(t) for t in access.admin_tenant_ids()}  # a class made per call
        return form

    def get_readonly_fields(self, request: HttpRequest, obj: IngestJob | None = None) -> list[str]:
        return self.readonly_fields if obj is not None else []

    def get_exclude(self, request: HttpRequest, obj: IngestJob | None = None) -> list[str]:
        return self.exclude if obj is not None else []

    def save_model(self, request: HttpRequest, obj: IngestJob, form: Any, change: bool) -> None:
        if change:
            return  # jobs are not edited, only created
        try:
            tenant = form.cleaned_data["tenant"]
            job = ingest_job_create(
                tenant=tenant, files=form.cleaned_data["files"],
                audience=form.cleaned_data["audience"], source_type=form.cleaned_data["source_type"],
                created_by_id=request.user.pk, writer_audiences=sorted(staff_access(request).audience_slugs(tenant.pk)),
            )
        except UploadRejected as exc:
            messages.error(request, str(exc))
            raise
        obj.pk = job.pk
        messages.info(request, _("Ingest job #%(job)s queued with %(count)d file(s).")
                      % {"job": job.pk, "count": len(job.file_names)})

    def has_change_permission(self, request: HttpRequest, obj: IngestJob | None = None) -> bool:
        return obj is None and super().has_change_permission(request, obj)

    @admin.display(description=gettext_lazy("files"))
    def file_count(self, obj: IngestJob) -> int:
        return len(obj.file_names or [])

    @admin.display(description=gettext_lazy("report"))
    def summary(self, obj: IngestJob) -> str:
        if not obj.report:
            return ingest_job_shown(obj)[1] or "—"
        r = obj.report
        return _("%(added)s added, %(changed)s changed, %(unchanged)s unchanged, %(failed)d failed; %(chunks)s "
                 "chunks") % {"added": r["added"], "changed": r["changed"], "unchanged": r["unchanged"],
                              "failed": len(r["failed"]), "chunks": r["chunks"]}

    @admin.display(description=gettext_lazy("report"))
    def report_display(self, obj: IngestJob) -> str:
        # Files named as the uploader named them, also in reports stored with server paths.
        report = ingest_job_shown(obj)[0]
        return format_html("<pre>{}</pre>", json.dumps(report, indent=2)) if report else "—"

    @admin.display(description=gettext_lazy("error"))
    def error_display(self, obj: IngestJob) -> str:
        return ingest_job_shown(obj)[1]
from corpus.sources.websync import admin as websync_admin  # noqa: E402,F401  (web sources, issue 19 item 3)
