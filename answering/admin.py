"""Support agents work escalations here; traces are read-only evidence of every answer."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html

from answering.models import Escalation, Trace
from answering.stats import answer_stats
from tenants.admin import TenantScopedAdmin
from tenants.rls import staff_tenant_ids


def _pretty(value: Any) -> str:
    return format_html("<pre style='white-space:pre-wrap'>{}</pre>", json.dumps(value, indent=2, default=str))


@admin.register(Escalation)
class EscalationAdmin(TenantScopedAdmin):
    list_display = ["id", "tenant", "short_question", "reason", "status", "assignee", "created_at"]
    list_filter = ["tenant", "status", "reason"]
    search_fields = ["question", "conversation_id"]
    list_select_related = ["tenant", "assignee"]
    fields = ["tenant", "question", "history_display", "reason", "detail", "candidates_display", "trace",
              "status", "assignee", "resolution_note", "created_at", "resolved_at"]
    readonly_fields = ["tenant", "question", "history_display", "reason", "detail", "candidates_display", "trace",
                       "created_at", "resolved_at"]
    actions = ["mark_resolved", "assign_to_me"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # escalations come from the pipeline's one exit

    @admin.display(description="question")
    def short_question(self, obj: Escalation) -> str:
        return obj.question[:80]

    @admin.display(description="history")
    def history_display(self, obj: Escalation) -> str:
        return _pretty(obj.history)

    @admin.display(description="what retrieval found")
    def candidates_display(self, obj: Escalation) -> str:
        return _pretty(obj.candidates)

    def save_model(self, request: HttpRequest, obj: Escalation, form: Any, change: bool) -> None:
        if obj.status == Escalation.Status.RESOLVED and obj.resolved_at is None:
            obj.resolved_at = timezone.now()
        super().save_model(request, obj, form, change)

    @admin.action(description="Mark resolved")
    def mark_resolved(self, request: HttpRequest, queryset: Any) -> None:
        count = queryset.update(status=Escalation.Status.RESOLVED, resolved_at=timezone.now())
        self.message_user(request, f"{count} escalation(s) resolved.")

    @admin.action(description="Assign to me")
    def assign_to_me(self, request: HttpRequest, queryset: Any) -> None:
        count = queryset.update(assignee=request.user, status=Escalation.Status.IN_PROGRESS)
        self.message_user(request, f"{count} escalation(s) assigned to you.")


@admin.register(Trace)
class TraceAdmin(TenantScopedAdmin):
    list_display = ["id", "tenant", "short_question", "action", "generator", "cache_hit", "cost_usd", "feedback",
                    "created_at"]
    list_filter = ["tenant", "action", "cache_hit", "feedback"]
    search_fields = ["question", "conversation_id"]
    list_select_related = ["tenant"]

    def get_readonly_fields(self, request: HttpRequest, obj: Trace | None = None) -> list[str]:
        return [f.name for f in Trace._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Trace | None = None) -> bool:
        return False

    @admin.display(description="question")
    def short_question(self, obj: Trace) -> str:
        return obj.question[:80]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        stats = answer_stats(staff_tenant_ids(request.user))
        return super().changelist_view(request, {**(extra_context or {}), "answer_stats": stats})
