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
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from answering.handoff import retention, webhooks
from answering.handoff.config import handoff_config, handoff_settings_save, new_webhook_secret
from answering.handoff.followups import thread
from answering.handoff.targets import UnsafeTarget, target_check
from answering.models import Escalation, EscalationMessage, HandoffSettings, WebhookDelivery
from tenants.admin import TenantScopedAdmin, TenantScopedRecordAdmin
from tenants.staff import NO_AUDIENCE_TEXT, StaffAccess, staff_access


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
    shown_as = handoff_config(tenant_id=escalation.tenant_id).agent_display_name
    if not messages_:
        return format_html("{}", _("No messages yet. Your reply below appears on the asker's follow-up page."))
    return format_html('<ol class="escalation-thread">{}</ol>', format_html_join(
        "", '<li class="message-{}"><strong>{}</strong> · {}<br><span style="white-space:pre-wrap">{}</span></li>',
        ((m.kind, _("%(author)s (the asker sees %(shown_as)s)") % {"author": m.author, "shown_as": shown_as}
          if m.kind == "agent" else _("Asker"),
          m.created_at.strftime("%Y-%m-%d %H:%M"), m.body) for m in messages_)))


def erase_selected(*, escalations: Sequence[Escalation], access: StaffAccess) -> list[str]:
    """Erase the askers behind the selection: by contact where there is one, else the escalation's own conversation."""
    lines = []
    for escalation in escalations:
        if not access.superuser and not access.is_admin(escalation.tenant_id):
            lines.append(_("Escalation #%(id)s: only a tenant admin may erase.") % {"id": escalation.pk})
            continue
        report = retention.erase_escalation_asker(tenant_id=escalation.tenant_id, escalation_id=escalation.pk)
        lines.append(_("Erased: %(summary)s.") % {"summary": report.summary()})
    return lines


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(TenantScopedRecordAdmin):
    # A delivery quotes its trace's question, contact and answer: shown like that trace.
    audience_field, audience_key = "audiences", "slug"
    list_display = ["id", "tenant", "event", "status", "attempt_count", "next_attempt_at", "created_at"]
    list_filter = ["status", "event", "tenant"]
    readonly_fields = ["tenant", "event", "url", "status", "attempt_count", "next_attempt_at", "delivered_at",
                       "created_at", "attempts_display", "payload"]
    exclude = ["attempts", "escalation", "trace", "audiences"]
    actions = ["redeliver"]

    @admin.display(description=gettext_lazy("attempts"))
    def attempts_display(self, obj: WebhookDelivery) -> SafeString:
        if not obj.attempts:
            return format_html("{}", _("none yet"))
        return format_html("<table><tr><th>#</th><th>{}</th><th>HTTP</th><th>{}</th><th>ms</th>"
                           "<th>{}</th></tr>{}</table>", _("at"), _("error"), _("next try"), format_html_join(
                               "", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                               ((a.get("number"), a.get("at"), a.get("status_code") or "—", a.get("error") or "ok",
                                 a.get("ms"), a.get("retry_at") or "—") for a in obj.attempts)))

    @admin.action(description=gettext_lazy("Redeliver the selected events"))
    def redeliver(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        for delivery in queryset:
            webhooks.webhook_redeliver(tenant_id=delivery.tenant_id, delivery_id=delivery.pk)
        self.message_user(request, _("%(count)d delivery(ies) queued again.") % {"count": queryset.count()})


class HandoffSettingsForm(forms.ModelForm):
    """The secret is never a field: it is made by the server and shown once (`rotate_webhook_secret`)."""

    agent_display_name = forms.CharField(
        required=False, max_length=80, label=gettext_lazy("Agents' display name"),
        help_text=gettext_lazy("The name askers see on every agent reply, instead of the agent's user name; empty: "
                               "\"Support team\"."))
    rotate_webhook_secret = forms.BooleanField(
        required=False, label=gettext_lazy("Make a new webhook secret"),
        help_text=gettext_lazy("The new secret is shown once, on the next page; the old one stops signing at once."))

    class Meta:
        model = HandoffSettings
        fields = ["tenant", "agent_display_name", "notify_mode", "overdue_hours", "retention_days", "webhook_url"]
        help_texts = {"webhook_url": gettext_lazy("http(s) URL receiving escalation.created, escalation.message, "
                                                  "escalation.resolved and feedback.created of every audience "
                                                  "(README, Receiving webhooks); only a member holding every "
                                                  "audience sets it.")}

    # Set per request on a class made per call (HandoffSettingsAdmin.get_form): the tenants whose
    # every audience the member holds (None: a superuser).
    webhook_tenant_ids: frozenset[int] | None = frozenset()

    def clean_webhook_url(self) -> str:
        url = (self.cleaned_data.get("webhook_url") or "").strip()
        if url:
            try:
                target_check(url)
            except UnsafeTarget as exc:
                raise forms.ValidationError(str(exc)) from exc
        return url

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        tenant = cleaned.get("tenant") or getattr(self.instance, "tenant", None)
        stored = self.instance.webhook_url if self.instance.pk is not None else ""
        touches = (cleaned.get("webhook_url", stored) or "") != stored or cleaned.get("rotate_webhook_secret")
        if touches and self.webhook_tenant_ids is not None and (tenant is None or tenant.pk not in
                                                                 self.webhook_tenant_ids):
            raise forms.ValidationError(_("Only a member holding every audience of the tenant may set its webhook "
                                          "or its secret: the webhook receives every audience's events."))
        return cleaned


def holds_every_audience(access: StaffAccess, tenant_id: int | None) -> bool:
    """The webhook carries every audience's events (docs/decisions/0094): only such a member points it."""
    grant = access.grant(tenant_id)
    return access.superuser or (grant is not None and grant.every_audience)


@admin.register(HandoffSettings)
class HandoffSettingsAdmin(TenantScopedAdmin):
    form = HandoffSettingsForm
    admin_writes = True
    # Modes, hours and the webhook's address; the secret is never rendered (webhook_secret_state).
    audience_field = NO_AUDIENCE_TEXT
    list_display = ["tenant", "agent_display_name", "notify_mode", "overdue_hours", "retention_days", "webhook_url"]

    @admin.display(description=gettext_lazy("Webhook secret"))
    def webhook_secret_state(self, obj: HandoffSettings) -> str:
        return _("set (hidden; make a new one to replace it)") if obj.webhook_secret else _("not set")

    def get_form(self, request: HttpRequest, obj: HandoffSettings | None = None, change: bool = False,
                 **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        access = staff_access(request)
        form.webhook_tenant_ids = None if access.superuser else frozenset(  # type: ignore[attr-defined]  # form is a class made per call, this attribute set per request
            t for t in access.tenant_ids() if holds_every_audience(access, t))
        return form

    def _may_point(self, request: HttpRequest, obj: HandoffSettings | None) -> bool:
        return obj is None or holds_every_audience(staff_access(request), obj.tenant_id)

    def get_fields(self, request: HttpRequest, obj: HandoffSettings | None = None) -> list[str]:  # type: ignore[override]  # plain names: the stub's list of name groups is invariant
        fields = ["tenant", "agent_display_name", "notify_mode", "overdue_hours", "retention_days", "webhook_url",
                  "webhook_secret_state"]
        return fields + (["rotate_webhook_secret"] if self._may_point(request, obj) else [])

    def get_readonly_fields(self, request: HttpRequest, obj: HandoffSettings | None = None) -> list[str]:
        fields = ["webhook_secret_state"] + (["tenant"] if obj is not None else [])
        return fields + ([] if self._may_point(request, obj) else ["webhook_url"])

    def save_model(self, request: HttpRequest, obj: HandoffSettings, form: Any, change: bool) -> None:
        stored = handoff_config(tenant_id=obj.tenant_id)
        url, rotate = obj.webhook_url, bool(form.cleaned_data.get("rotate_webhook_secret"))
        if not holds_every_audience(staff_access(request), obj.tenant_id):
            if (url or "") != stored.webhook_url or rotate:
                self.message_user(request, _("Not saved: only a member holding every audience of the tenant may "
                                             "set its webhook, which receives every audience's events."),
                                  messages.ERROR)
                return
        secret = new_webhook_secret() if url and (rotate or not stored.webhook_secret) else stored.webhook_secret
        try:
            handoff_settings_save(tenant_id=obj.tenant_id, notify_mode=obj.notify_mode,
                                  overdue_hours=obj.overdue_hours, retention_days=obj.retention_days,
                                  webhook_url=url, webhook_secret=secret,
                                  agent_display_name=obj.agent_display_name)
        except (UnsafeTarget, ValueError) as exc:
            self.message_user(request, _("Not saved: %(reason)s") % {"reason": exc}, messages.ERROR)
            return
        if url and secret != stored.webhook_secret:
            request._new_webhook_secret = secret  # type: ignore[attr-defined]  # the response page shows it once

    def _secret_page(self, request: HttpRequest, obj: HandoffSettings) -> HttpResponse | None:
        secret = getattr(request, "_new_webhook_secret", None)
        if secret is None:
            return None
        context = {**self.admin_site.each_context(request), "title": _("Webhook secret"), "opts": self.opts,
                   "settings_row": obj, "secret": secret}
        response = TemplateResponse(request, "admin/answering/handoffsettings/secret.html", context)
        response["Cache-Control"] = "no-store"
        return response

    def response_add(self, request: HttpRequest, obj: HandoffSettings, post_url_continue: str | None = None,
                     ) -> HttpResponse:
        return self._secret_page(request, obj) or super().response_add(request, obj, post_url_continue)

    def response_change(self, request: HttpRequest, obj: HandoffSettings) -> HttpResponse:
        return self._secret_page(request, obj) or super().response_change(request, obj)
