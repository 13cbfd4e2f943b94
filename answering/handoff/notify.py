"""Email through Django's email framework (console backend under `make run`, SMTP from the
environment): agents hear of new escalations, one email each or a digest (a per-tenant
setting); the asker hears of each agent reply. Each email is a background task.

Agents are the tenant's members with an email address whose audiences cover the audiences
the question was asked with: the same people who see the escalation in the console.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.core.mail import send_mail
from django.utils import timezone
from django_tasks import task

from answering.handoff.links import console_url, followup_url
from answering.models import Escalation, EscalationMessage
from tenants.models import Membership
from tenants.rls import tenant_context

log = logging.getLogger(__name__)
MAX_DIGEST_ITEMS = 50


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
    email_agents_new_escalation.enqueue(tenant_id=tenant_id, escalation_id=escalation_id)


def asker_reply_enqueue(*, tenant_id: int, message_id: int) -> None:
    email_asker_reply.enqueue(tenant_id=tenant_id, message_id=message_id)


@task()
def email_agents_new_escalation(tenant_id: int, escalation_id: int) -> int:
    escalation = _escalation(tenant_id, escalation_id)
    if escalation is None:
        return 0
    recipients = agent_recipients(tenant_id=tenant_id, audiences=escalation.trace.audiences or [])
    if recipients:
        send_mail(subject=f"[{escalation.tenant.name}] New question for a person: {escalation.question[:60]}",
                  message=(f"A customer asked:\n\n{escalation.question}\n\n"
                           f"Answerdesk did not answer it ({escalation.get_reason_display().lower()}). "
                           f"Reply in the console:\n{console_url(escalation_id=escalation.pk)}\n"),
                  from_email=None, recipient_list=recipients)
    with tenant_context(tenant_id):
        Escalation.objects.filter(pk=escalation_id, tenant_id=tenant_id).update(agents_notified_at=timezone.now())
    return len(recipients)


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
    lines = [f"- {e.question[:120]}\n  {console_url(escalation_id=e.pk)}" for e in waiting]
    if recipients:
        send_mail(subject=f"[{tenant_name}] {len(waiting)} question(s) waiting for a person",
                  message="Waiting in the queue, oldest first:\n\n" + "\n".join(lines) + "\n",
                  from_email=None, recipient_list=recipients)
    with tenant_context(tenant_id):
        Escalation.objects.filter(pk__in=[e.pk for e in waiting], tenant_id=tenant_id).update(
            agents_notified_at=timezone.now())
    return len(waiting)


@task()
def email_asker_reply(tenant_id: int, message_id: int) -> bool:
    with tenant_context(tenant_id):
        message = (EscalationMessage.objects.select_related("escalation", "escalation__tenant")
                   .filter(pk=message_id, tenant_id=tenant_id).first())
    if message is None or not message.escalation.contact_email:
        return False
    escalation = message.escalation
    link = followup_url(tenant_slug=escalation.tenant.slug, public_id=escalation.public_id)
    send_mail(subject=f"Re: {escalation.question[:70]}",
              message=(f"{message.body}\n\n— {escalation.tenant.name} support\n\n"
                       f"Your question: {escalation.question}\nRead the conversation and reply: {link}\n"),
              from_email=None, recipient_list=[escalation.contact_email])
    log.info("asker reply email sent for escalation %s", escalation.pk)
    return True
