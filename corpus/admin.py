"""Documents (metadata, and chunk text through the tenant scope) and uploads in the console.

A member sees the documents of their audiences only, and the ingest jobs that wrote only into
them; only a tenant admin (role owner) or a superuser uploads, into audiences they hold
(tenants/staff.py, docs/decisions/0033)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from psycopg import sql

from corpus.ingest import SOURCE_TYPES
from corpus.jobs import UploadRejected, ingest_job_create
from corpus.models import Document, IngestJob
from tenants.admin import TenantScopedAdmin
from tenants.scope import ChunkQuery, TenantScope
from tenants import staff
from tenants.staff import staff_access


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


@admin.register(Document)
class DocumentAdmin(TenantScopedAdmin):
    """Document metadata. Chunk text stays behind the tenant scope and is not listed here."""

    audience_field, audience_single = "audience_id", True
    list_display = ["slug", "title", "tenant", "source_type", "audience", "status", "version",
                    "effective_date", "chunk_count", "updated_at"]
    list_filter = ["tenant", "source_type", "status", "audience__slug"]
    search_fields = ["slug", "title"]
    readonly_fields = [f.name for f in Document._meta.fields]
    list_select_related = ["tenant", "audience"]

    change_form_template = "admin/corpus/document/change_form.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # documents arrive through ingest, which keeps chunks and hashes consistent

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> Any:
        document = self.get_object(request, object_id)
        context = dict(extra_context or {})
        if document is not None:
            audiences = tuple(sorted(staff_access(request).audience_ids(document.tenant_id)))
            context["chunks_visible"] = document.audience_id in audiences
            context["chunks"] = document_chunks(document=document, audience_ids=audiences)
        return super().change_view(request, object_id, form_url, context)

    def has_delete_permission(self, request: HttpRequest, obj: Document | None = None) -> bool:
        return False  # archive through ingest --prune or supersession; deleting loses history


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        files = data if isinstance(data, (list, tuple)) else [data]
        return [super(MultipleFileField, self).clean(item, initial) for item in files if item]


class UploadForm(forms.ModelForm):
    files = MultipleFileField(help_text="Markdown, HTML, PDF, text, or a changelog/tickets JSON or CSV file.")
    audience = forms.ChoiceField(choices=(), help_text="Who may read the documents: an audience you hold.")
    source_type = forms.ChoiceField(choices=[(s, s) for s in SOURCE_TYPES], initial="doc")
    # Set per request on a class made per call (IngestJobAdmin.get_form), never on this shared one.
    held_slugs: dict[int, frozenset[str]] = {}

    class Meta:
        model = IngestJob
        fields = ["tenant", "audience", "source_type"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        slugs = sorted(set().union(*self.held_slugs.values())) if self.held_slugs else []
        self.fields["audience"].choices = [(s, s) for s in slugs]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        tenant, audience = cleaned.get("tenant"), cleaned.get("audience")
        if tenant is not None and audience and audience not in self.held_slugs.get(tenant.pk, frozenset()):
            raise forms.ValidationError(f"You do not hold the audience {audience!r} of {tenant.slug}: "
                                        "uploads go only into audiences you hold.")
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
    readonly_fields = ["tenant", "status", "audience", "source_type", "file_names", "report_display", "error",
                       "task_id", "created_by", "created_at", "started_at", "finished_at"]
    exclude = ["report", "upload_dir"]

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
        messages.info(request, f"Ingest job #{job.pk} queued with {len(job.file_names)} file(s).")

    def has_change_permission(self, request: HttpRequest, obj: IngestJob | None = None) -> bool:
        return obj is None and super().has_change_permission(request, obj)

    @admin.display(description="files")
    def file_count(self, obj: IngestJob) -> int:
        return len(obj.file_names or [])

    @admin.display(description="report")
    def summary(self, obj: IngestJob) -> str:
        if not obj.report:
            return obj.error or "—"
        r = obj.report
        return (f"{r['added']} added, {r['changed']} changed, {r['unchanged']} unchanged, "
                f"{len(r['failed'])} failed; {r['chunks']} chunks")

    @admin.display(description="report")
    def report_display(self, obj: IngestJob) -> str:
        return format_html("<pre>{}</pre>", json.dumps(obj.report, indent=2)) if obj.report else "—"
