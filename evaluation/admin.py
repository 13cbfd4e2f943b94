"""Evaluation runs in the console: arms side by side, the recall@k chart, and every case.

A run has no audience column: its judge and locators read every audience of the tenant, so a
run is visible only to members who hold every audience (and superusers), docs/decisions/0033."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.safestring import mark_safe

from evaluation.models import EvalRun
from evaluation.report import render_html
from tenants.admin import TenantScopedAdmin
from tenants.staff import EVERY_AUDIENCE


@admin.register(EvalRun)
class EvalRunAdmin(TenantScopedAdmin):
    audience_field = EVERY_AUDIENCE
    list_display = ["id", "tenant", "golden", "arm_list", "hybrid_page_recall_5", "created_at"]
    list_filter = ["tenant"]
    fields = ["tenant", "golden", "created_at", "report_view"]
    readonly_fields = ["tenant", "golden", "created_at", "report_view"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs come from manage.py eval

    def has_change_permission(self, request: HttpRequest, obj: EvalRun | None = None) -> bool:
        return False

    @admin.display(description="arms")
    def arm_list(self, obj: EvalRun) -> str:
        return ", ".join(obj.arms)

    @admin.display(description="hybrid page recall@5")
    def hybrid_page_recall_5(self, obj: EvalRun) -> Any:
        return (obj.report.get("arms", {}).get("hybrid", {}).get("metrics", {}) or {}).get("page_recall@5")

    @admin.display(description="report")
    def report_view(self, obj: EvalRun) -> str:
        # The same server-rendered report as --html: chart, arms with deltas, misses per case.
        html = render_html(obj.report)
        body = html[html.index("<body>") + 6: html.rindex("</body>")]
        return mark_safe(body)  # noqa: S308 - rendered by our template with autoescaping
