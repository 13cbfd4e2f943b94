"""The escalation page's notification lines: did the agents' alert and each reply email go out,
and if not, how many tries and the last error (answering/handoff/outbox.py keeps the state)."""

from __future__ import annotations

from django.utils import timezone
from django.utils.html import format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from answering.handoff.config import NO_MAIL_SERVER_TEXT, mail_sends
from answering.handoff.outbox import AGENT_ALERT, ASKER_REPLY, outbox_line
from answering.models import Escalation, EscalationMessage, NotificationStatus


def _alert_line(escalation: Escalation) -> str:
    if escalation.alert_status == NotificationStatus.NONE:
        # Digest mode, or an escalation from before alerts kept their state.
        told = escalation.agents_notified_at
        return f"{AGENT_ALERT.label}: " + (_("agents told at %(at)s") % {"at": f"{timezone.localtime(told):%Y-%m-%d %H:%M}"}
                                           if told else _("not sent one by one (the digest lists it)"))
    return outbox_line(channel=AGENT_ALERT, status=escalation.alert_status, attempts=escalation.alert_attempts,
                       error=escalation.alert_error, next_at=escalation.alert_next_at)


def reply_delivery_text(*, escalation: Escalation) -> str:
    """What became of an agent's reply beyond the follow-up page, said truthfully: "emailed" only
    when a backend that sends is configured (answering/handoff/config.py)."""
    if not escalation.contact_email:
        return _("the asker left no email address, so nothing was emailed.")
    if not mail_sends():
        return _("email to the asker %(not_sent)s.") % {"not_sent": NO_MAIL_SERVER_TEXT}
    return _("emailed to the asker.")


def notifications_html(*, escalation: Escalation) -> SafeString:
    """One line for the agents' alert, one per agent message emailed to the asker, oldest first."""
    emailed = (EscalationMessage.objects.filter(tenant_id=escalation.tenant_id, escalation_id=escalation.pk)
               .exclude(email_status=NotificationStatus.NONE).order_by("created_at", "id"))
    lines = [_alert_line(escalation)] + [
        outbox_line(channel=ASKER_REPLY, status=m.email_status, attempts=m.email_attempts, error=m.email_error,
                    next_at=m.email_next_at) + " " + _("(reply of %(at)s)") % {"at": f"{timezone.localtime(m.created_at):%Y-%m-%d %H:%M}"}
        for m in emailed]
    if not mail_sends():
        # The backend printed or kept the mail: "sent" would claim it reached someone.
        lines = [line.replace(": sent", f": {NO_MAIL_SERVER_TEXT}", 1) for line in lines]
    return format_html_join("", '<p class="notification">{}</p>', ((line,) for line in lines))
