"""Email through Django's email framework (console backend under `make run`, SMTP from the
environment): agents hear of new escalations, one email each or a digest (a per-tenant
setting); the asker hears of each agent reply. Each email is a background task.

Agents are the tenant's members with an email address whose audiences cover the audiences
the question was asked with: the same people who see the escalation in the console.

Every subject goes through `one_line`: a header cannot hold a line break (Django refuses it
with BadHeaderError), and questions are often several lines. A failed send is retried with
backoff and its state shown on the escalation's console page (answering/handoff/outbox.py).
"""

from __future__ import annotations

import datetime as dt
import logging
import unicodedata
from collections.abc import Callable, Sequence

from django.core.mail import send_mail
from django.utils import timezone
from django_tasks import default_task_backend, task
from django_tasks.base import Task

from answering.handoff.links import console_url, followup_url
from answering.handoff.outbox import (AGENT_ALERT, ASKER_REPLY, Channel, outbox_claim, outbox_due, outbox_queue,
                                      outbox_record)
from answering.models import Escalation, EscalationMessage
from tenants.models import Membership
from tenants.rls import tenant_context

log = logging.getLogger(__name__)
MAX_DIGEST_ITEMS = 50
MAX_SUBJECT_CHARS = 120


def one_line(text: str, *, limit: int = MAX_SUBJECT_CHARS) -> str:
    """`text` as one line of at most `limit` characters: every run of whitespace and control
    characters (CR, LF, tab, U+2028, NEL, NUL, …) becomes one space; a longer text ends in '…'."""
    spaced = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    folded = " ".join(spaced.split())
    return folded if len(folded) <= limit else folded[: limit - 1].rstrip() + "…"


def agent_recipients(*, tenant_id: int, audiences: Sequence[str]) -> list[str]:
    wanted = set(audiences)
    members = (Membership.objects.filter(tenant_id=tenant_id, user__is_active=True).exclude(user__email="")
               .select_related("user").prefetch_related("audiences"))
    return sorted({m.user.email for m in members if wanted <= {a.slug for a in m.audiences.all()}})


def _escalation(tenant_id: int, escalation_id: int) -> Escalation | None:
    with tenant_context(tenant_id):
        return (Escalation.objects.select_related("tenant", "trace")
                .filter(pk=escalation_id, tenant_id=tenant_id).first())


def agents_alert_enqueue(*, tenant_id: int, escalation_id: int) -> None:
    outbox_queue(channel=AGENT_ALERT, tenant_id=tenant_id, row_id=escalation_id)
    email_agents_new_escalation.enqueue(tenant_id=tenant_id, escalation_id=escalation_id)


def asker_reply_enqueue(*, tenant_id: int, message_id: int) -> None:
    outbox_queue(channel=ASKER_REPLY, tenant_id=tenant_id, row_id=message_id)
    email_asker_reply.enqueue(tenant_id=tenant_id, message_id=message_id)


def _attempt(*, channel: Channel, tenant_id: int, row_id: int, send: Callable[[int, int], bool],
             retry: Task[..., str], row_argument: str) -> str:
    """One claimed try of `send` (False: nobody to send to), recorded on the row whatever happens."""
    if not outbox_claim(channel=channel, tenant_id=tenant_id, row_id=row_id, now=timezone.now()):
        return "not claimed"  # sent, given up, or another attempt holds it
    sent: bool | None
    try:
        sent, error = send(tenant_id, row_id), ""
    except Exception as exc:  # SMTP down, refused, a bad header: any failure waits for the next try
        log.warning("%s for row %s of tenant %s failed: %s", channel.label, row_id, tenant_id, exc)
        sent, error = None, f"{type(exc).__name__}: {exc}"
    outcome = outbox_record(channel=channel, tenant_id=tenant_id, row_id=row_id, sent=sent, error=error,
                            now=timezone.now())
    if outcome.retry_at is not None:
        _schedule(retry, when=outcome.retry_at, tenant_id=tenant_id, **{row_argument: row_id})
    return outcome.status


def _schedule(retry: Task[..., str], *, when: dt.datetime, **arguments: int) -> None:
    if default_task_backend.supports_defer:  # otherwise the housekeeping round finds it due
        retry.using(run_after=when).enqueue(**arguments)


def notifications_due(*, tenant_id: int, now: dt.datetime | None = None) -> int:
    """Queue the tenant's notifications whose retry time has come (for backends without run_after)."""
    alerts = outbox_due(channel=AGENT_ALERT, tenant_id=tenant_id, now=now)
    replies = outbox_due(channel=ASKER_REPLY, tenant_id=tenant_id, now=now)
    for escalation_id in alerts:
        email_agents_new_escalation.enqueue(tenant_id=tenant_id, escalation_id=escalation_id)
    for message_id in replies:
        email_asker_reply.enqueue(tenant_id=tenant_id, message_id=message_id)
    return len(alerts) + len(replies)


def _agents_alert_send(tenant_id: int, escalation_id: int) -> bool:
    escalation = _escalation(tenant_id, escalation_id)
    if escalation is None:
        return False
    recipients = agent_recipients(tenant_id=tenant_id, audiences=escalation.trace.audiences or [])
    if recipients:
        send_mail(subject=one_line(f"[{escalation.tenant.name}] New question for a person: {escalation.question}"),
                  message=(f"A customer asked:\n\n{escalation.question}\n\n"
                           f"Answerdesk did not answer it ({escalation.get_reason_display().lower()}). "
                           f"Reply in the console:\n{console_url(escalation_id=escalation.pk)}\n"),
                  from_email=None, recipient_list=recipients)
    with tenant_context(tenant_id):
        Escalation.objects.filter(pk=escalation_id, tenant_id=tenant_id).update(agents_notified_at=timezone.now())
    return bool(recipients)


@task()
def email_agents_new_escalation(tenant_id: int, escalation_id: int) -> str:
    return _attempt(channel=AGENT_ALERT, tenant_id=tenant_id, row_id=escalation_id, send=_agents_alert_send,
                    retry=email_agents_new_escalation, row_argument="escalation_id")


def agents_digest_send(*, tenant_id: int, tenant_name: str) -> int:
    """One email listing the escalations no agent has been told of yet; each is listed once."""
    with tenant_context(tenant_id):
        waiting = list(Escalation.objects.select_related("trace").filter(
            tenant_id=tenant_id, agents_notified_at__isnull=True, status=Escalation.Status.OPEN)
            .order_by("created_at")[:MAX_DIGEST_ITEMS])
    if not waiting:
        return 0
    audiences = sorted({slug for e in waiting for slug in (e.trace.audiences or [])})
    recipients = agent_recipients(tenant_id=tenant_id, audiences=audiences)
    lines = [f"- {one_line(e.question)}\n  {console_url(escalation_id=e.pk)}" for e in waiting]
    try:
        if recipients:
            send_mail(subject=one_line(f"[{tenant_name}] {len(waiting)} question(s) waiting for a person"),
                      message="Waiting in the queue, oldest first:\n\n" + "\n".join(lines) + "\n",
                      from_email=None, recipient_list=recipients)
    except Exception:  # the next round lists the same escalations again; the other tenants' rounds go on
        log.exception("digest for tenant %s failed; retried at the next housekeeping round", tenant_id)
        return 0
    with tenant_context(tenant_id):
        Escalation.objects.filter(pk__in=[e.pk for e in waiting], tenant_id=tenant_id).update(
            agents_notified_at=timezone.now())
    return len(waiting)


def _asker_reply_send(tenant_id: int, message_id: int) -> bool:
    with tenant_context(tenant_id):
        message = (EscalationMessage.objects.select_related("escalation", "escalation__tenant")
                   .filter(pk=message_id, tenant_id=tenant_id).first())
    if message is None or not message.escalation.contact_email:
        return False
    escalation = message.escalation
    link = followup_url(tenant_slug=escalation.tenant.slug, public_id=escalation.public_id)
    send_mail(subject=one_line(f"Re: {escalation.question}"),
              message=(f"{message.body}\n\n— {escalation.tenant.name} support\n\n"
                       f"Your question: {escalation.question}\nRead the conversation and reply: {link}\n"),
              from_email=None, recipient_list=[escalation.contact_email])
    log.info("asker reply email sent for escalation %s", escalation.pk)
    return True


@task()
def email_asker_reply(tenant_id: int, message_id: int) -> str:
    return _attempt(channel=ASKER_REPLY, tenant_id=tenant_id, row_id=message_id, send=_asker_reply_send,
                    retry=email_asker_reply, row_argument="message_id")
