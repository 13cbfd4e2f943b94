"""The escalation page's notification lines: did the agents' alert and each reply email go out,
and if not, how many tries and the last error (answering/handoff/outbox.py keeps the state)."""

from __future__ import annotations

from django.utils import timezone
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from answering.handoff.outbox import AGENT_ALERT, ASKER_REPLY, outbox_line
from answering.models import Escalation, EscalationMessage, NotificationStatus


def _alert_line(escalation: Escalation) -> str:
    if escalation.alert_status == NotificationStatus.NONE:
        # Digest mode, or an escalation from before alerts kept their state.
        told = escalation.agents_notified_at
        return f"{AGENT_ALERT.label}: " + (f"agents told at {timezone.localtime(told):%Y-%m-%d %H:%M}" if told
                                           else "not sent one by one (the digest lists it)")
    return outbox_line(channel=AGENT_ALERT, status=escalation.alert_status, attempts=escalation.alert_attempts,
                       error=escalation.alert_error, next_at=escalation.alert_next_at)


def notifications_html(*, escalation: Escalation) -> SafeString:
    """One line for the agents' alert, one per agent message emailed to the asker, oldest first."""
    emailed = (EscalationMessage.objects.filter(tenant_id=escalation.tenant_id, escalation_id=escalation.pk)
               .exclude(email_status=NotificationStatus.NONE).order_by("created_at", "id"))
    lines = [_alert_line(escalation)] + [
        outbox_line(channel=ASKER_REPLY, status=m.email_status, attempts=m.email_attempts, error=m.email_error,
                    next_at=m.email_next_at) + f" (reply of {timezone.localtime(m.created_at):%Y-%m-%d %H:%M})"
        for m in emailed]
    return format_html_join("", '<p class="notification">{}</p>', ((line,) for line in lines))
