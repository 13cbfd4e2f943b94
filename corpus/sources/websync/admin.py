"""Web sources in the console: tenant admins add them and press "Sync now"; members of the
tenant who hold the source's audience see them, their pages and each run's report.
Registered by one import at the end of corpus/admin.py."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from corpus.models import WebPage, WebSource
from corpus.sources.websync.sources import SourceRejected, websource_check, websource_save
from corpus.sources.websync.tasks import websync_now
from tenants.admin import TenantScopedAdmin, TenantScopedRecordAdmin


class WebSourceForm(forms.ModelForm):
    include_patterns = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                                       help_text="One path pattern a line, e.g. /docs/*; empty: every path.")
    exclude_patterns = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                                       help_text="One path pattern a line, e.g. /blog/*.")

    class Meta:
        model = WebSource
        fields = ["tenant", "audience", "name", "start_url", "kind", "include_patterns", "exclude_patterns",
                  "page_limit", "schedule"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        tenant = cleaned.get("tenant") or (self.instance.tenant if self.instance.tenant_id else None)
        audience = cleaned.get("audience")
        if tenant is None or audience is None or not cleaned.get("start_url"):
            return cleaned
        try:
            cleaned["start_url"] = websource_check(
                tenant=tenant, audience=audience, start_url=cleaned["start_url"], kind=cleaned.get("kind", ""),
                page_limit=int(cleaned.get("page_limit") or 0), schedule=cleaned.get("schedule", ""))
        except SourceRejected as exc:
            raise forms.ValidationError(str(exc)) from exc
        return cleaned


@admin.register(WebSource)
class WebSourceAdmin(TenantScopedAdmin):
    """A website the tenant's documents are synced from."""

    form = WebSourceForm
    audience_field, audience_single = "audience_id", True
    admin_writes = True
    list_display = ["__str__", "tenant", "kind", "audience", "schedule", "last_status", "summary", "last_run_at",
                    "next_run_at"]
    list_filter = ["tenant", "schedule", "last_status"]
    list_select_related = ["tenant", "audience"]
    actions = ["sync_now"]
    readonly_fields = ["last_status", "last_run_at", "next_run_at", "last_error", "report_display", "created_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: WebSource | None = None) -> list[str]:
        # A source stays with its tenant: its pages and documents are that tenant's.
        return [*self.readonly_fields, "tenant"] if obj is not None else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: WebSource, form: Any, change: bool) -> None:
        data = form.cleaned_data
        source = websource_save(tenant=obj.tenant if change else data["tenant"], audience=data["audience"], values=data,
                                source_id=obj.pk if change else None, created_by_id=request.user.pk)
        obj.pk = source.pk

    @admin.action(description="Sync now")
    def sync_now(self, request: HttpRequest, queryset: QuerySet[WebSource]) -> None:
        # The queryset is the member's own (TenantScopedAdmin); writing is for tenant admins.
        queued = 0
        for source in queryset.select_related("tenant"):
            if self._may_write(request, source):
                websync_now(tenant=source.tenant, source_id=source.pk)
                queued += 1
        messages.info(request, f"{queued} sync run(s) queued.")

    @admin.display(description="last run")
    def summary(self, obj: WebSource) -> str:
        r = obj.last_report
        if not r:
            return obj.last_error or "—"
        # Reports before the run budget have no skipped_count: their list held every skipped URL.
        skipped = r.get("skipped_count", len(r["skipped"]))
        return (f"{r['fetched']} fetched, {r['not_modified']} unchanged (304), {r['added']} added, "
                f"{r['changed']} changed, {skipped} skipped, {r['archived']} archived, "
                f"{len(r['errors'])} errors")

    @admin.display(description="report")
    def report_display(self, obj: WebSource) -> str:
        return format_html("<pre>{}</pre>", json.dumps(obj.last_report, indent=2)) if obj.last_report else "—"


@admin.register(WebPage)
class WebPageAdmin(TenantScopedRecordAdmin):
    """What each sync did with each URL: read only."""

    audience_field, audience_single = "source__audience_id", True
    list_display = ["url", "tenant", "source", "status", "http_status", "canonical_url", "last_error", "fetched_at"]
    list_filter = ["tenant", "status", ("source", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["url", "canonical_url"]
    list_select_related = ["tenant", "source"]
    readonly_fields = [f.name for f in WebPage._meta.fields]

