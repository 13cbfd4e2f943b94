"""The console's side of the handoff: queue hygiene (age, overdue), the thread on the
escalation page, erasure from the list, the webhook deliveries with their attempts and a
redeliver action, and each tenant's handoff settings (tenant admins only)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from answering.handoff import retention, webhooks
from answering.handoff.config import handoff_config, handoff_settings_save
from answering.handoff.followups import thread
from answering.handoff.targets import UnsafeTarget, target_check
from answering.models import Escalation, EscalationMessage, HandoffSettings, WebhookDelivery
from tenants.admin import TenantScopedAdmin, TenantScopedRecordAdmin
from tenants.staff import StaffAccess


def age_text(*, since: dt.datetime, now: dt.datetime | None = None) -> str:
    seconds = max(0, int(((now or timezone.now()) - since).total_seconds()))
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 48 * 3600:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def is_overdue(*, escalation: Escalation, now: dt.datetime | None = None) -> bool:
    """No agent reply yet, and older than the tenant's overdue hours."""
    if escalation.first_reply_at is not None or escalation.status == Escalation.Status.RESOLVED:
        return False
    hours = handoff_config(tenant_id=escalation.tenant_id).overdue_hours
    return (now or timezone.now()) - escalation.created_at > dt.timedelta(hours=hours)


def with_last_message_kind(queryset: QuerySet[Escalation]) -> QuerySet[Escalation]:
    """Each escalation with who wrote its latest thread message (asker, agent or None)."""
    # Index: answering_escalation_message_thread_idx (tenant_id, escalation_id, created_at).
    latest = (EscalationMessage.objects.filter(tenant_id=OuterRef("tenant_id"), escalation_id=OuterRef("pk"))
              .order_by("-created_at", "-id").values("author_kind")[:1])
    return queryset.annotate(last_message_kind=Subquery(latest))


def thread_html(*, escalation: Escalation) -> SafeString:
    messages_ = thread(tenant_id=escalation.tenant_id, escalation_id=escalation.pk)
    if not messages_:
        return format_html("{}", "No messages yet. Your reply below appears on the asker's follow-up page.")
    return format_html('<ol class="escalation-thread">{}</ol>', format_html_join(
        "", '<li class="message-{}"><strong>{}</strong> · {}<br><span style="white-space:pre-wrap">{}</span></li>',
        ((m.kind, m.author or "Asker", m.created_at.strftime("%Y-%m-%d %H:%M"), m.body) for m in messages_)))


def erase_selected(*, escalations: Sequence[Escalation], access: StaffAccess) -> list[str]:
    """Erase the askers behind the selection: by contact where there is one, else the escalation's own conversation."""
    lines = []
    for escalation in escalations:
        if not access.superuser and not access.is_admin(escalation.tenant_id):
            lines.append(f"Escalation #{escalation.pk}: only a tenant admin may erase.")
            continue
        report = retention.erase_escalation_asker(tenant_id=escalation.tenant_id, escalation_id=escalation.pk)
        lines.append(f"Erased: {report.summary()}.")
    return lines


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(TenantScopedRecordAdmin):
    list_display = ["id", "tenant", "event", "status", "attempt_count", "next_attempt_at", "created_at"]
    list_filter = ["status", "event", "tenant"]
    readonly_fields = ["tenant", "event", "url", "status", "attempt_count", "next_attempt_at", "delivered_at",
                       "created_at", "attempts_display", "payload"]
    exclude = ["attempts", "escalation", "trace"]
    actions = ["redeliver"]

    @admin.display(description="attempts")
    def attempts_display(self, obj: WebhookDelivery) -> SafeString:
        if not obj.attempts:
            return format_html("{}", "none yet")
        return format_html("<table><tr><th>#</th><th>at</th><th>HTTP</th><th>error</th><th>ms</th>"
                           "<th>next try</th></tr>{}</table>", format_html_join(
                               "", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                               ((a.get("number"), a.get("at"), a.get("status_code") or "—", a.get("error") or "ok",
                                 a.get("ms"), a.get("retry_at") or "—") for a in obj.attempts)))

    @admin.action(description="Redeliver the selected events")
    def redeliver(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        for delivery in queryset:
            webhooks.webhook_redeliver(tenant_id=delivery.tenant_id, delivery_id=delivery.pk)
        self.message_user(request, f"{queryset.count()} delivery(ies) queued again.")


class HandoffSettingsForm(forms.ModelForm):
    class Meta:
        model = HandoffSettings
        fields = ["tenant", "notify_mode", "overdue_hours", "retention_days", "webhook_url", "webhook_secret"]
        help_texts = {"webhook_url": "http(s) URL receiving escalation.created, escalation.message, "
                                     "escalation.resolved and feedback.created (README, Receiving webhooks).",
                      "webhook_secret": "Signs every delivery (HMAC-SHA256); left empty, one is generated."}

    def clean_webhook_url(self) -> str:
        url = (self.cleaned_data.get("webhook_url") or "").strip()
        if url:
            try:
                target_check(url)
            except UnsafeTarget as exc:
                raise forms.ValidationError(str(exc)) from exc
        return url


@admin.register(HandoffSettings)
class HandoffSettingsAdmin(TenantScopedAdmin):
    form = HandoffSettingsForm
    admin_writes = True
    list_display = ["tenant", "notify_mode", "overdue_hours", "retention_days", "webhook_url"]

    def get_readonly_fields(self, request: HttpRequest, obj: HandoffSettings | None = None) -> list[str]:
        return ["tenant"] if obj is not None else []

    def save_model(self, request: HttpRequest, obj: HandoffSettings, form: Any, change: bool) -> None:
        try:
            handoff_settings_save(tenant_id=obj.tenant_id, notify_mode=obj.notify_mode,
                                  overdue_hours=obj.overdue_hours, retention_days=obj.retention_days,
                                  webhook_url=obj.webhook_url, webhook_secret=obj.webhook_secret)
        except (UnsafeTarget, ValueError) as exc:
            self.message_user(request, f"Not saved: {exc}", messages.ERROR)
