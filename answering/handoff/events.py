"""What happens after an escalation changes: agents' email and the tenant's webhook.

Every entry point only registers work for after the commit (robust: a failure is logged,
never raised into the caller), and that work only writes a row and enqueues a task. So the
answer path, an agent's reply or an asker's message never waits on SMTP or a webhook
receiver, and never fails because of them (docs/decisions/0045).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction

from answering.handoff import notify, webhooks
from answering.handoff.config import handoff_config
from answering.handoff.links import console_url, followup_url
from answering.models import Escalation, EscalationMessage, HandoffSettings, Trace
from tenants.rls import tenant_context

log = logging.getLogger(__name__)


def _after_commit(work: Callable[[], None]) -> None:
    transaction.on_commit(work, robust=True)


def escalation_body(escalation: Escalation) -> dict[str, Any]:
    """An escalation as webhook receivers read it: the opaque id and links, never the sequence."""
    slug = escalation.tenant.slug
    return {"follow_up_id": escalation.public_id, "status": escalation.status, "reason": escalation.reason,
            "question": escalation.question, "contact_email": escalation.contact_email,
            "created_at": escalation.created_at.isoformat(),
            "follow_up_url": followup_url(tenant_slug=slug, public_id=escalation.public_id),
            "console_url": console_url(escalation_id=escalation.pk)}


def _load(tenant_id: int, escalation_id: int) -> Escalation | None:
    with tenant_context(tenant_id):
        # trace__tenant_id: the join names the tenant on both sides, as Citus needs (docs/decisions/0121).
        return Escalation.objects.select_related("tenant", "trace").filter(
            pk=escalation_id, tenant_id=tenant_id, trace__tenant_id=tenant_id).first()


def _created(tenant_id: int, escalation_id: int) -> None:
    escalation = _load(tenant_id, escalation_id)
    if escalation is None:
        return
    if handoff_config(tenant_id=tenant_id).notify_mode == HandoffSettings.NotifyMode.EACH:
        notify.agents_alert_enqueue(tenant_id=tenant_id, escalation_id=escalation_id)
    webhooks.webhook_enqueue(tenant_id=tenant_id, event="escalation.created", escalation_id=escalation_id,
                             audiences=escalation.trace.audiences, data={"escalation": escalation_body(escalation)})


def escalation_created(*, escalation: Escalation) -> None:
    tenant_id, escalation_id = escalation.tenant_id, escalation.pk
    _after_commit(lambda: _created(tenant_id, escalation_id))


def _message(tenant_id: int, escalation_id: int, message_id: int) -> None:
    escalation = _load(tenant_id, escalation_id)
    with tenant_context(tenant_id):
        message = EscalationMessage.objects.filter(pk=message_id, tenant_id=tenant_id).first()
    if escalation is None or message is None:
        return
    if message.author_kind == EscalationMessage.Kind.AGENT and escalation.contact_email:
        notify.asker_reply_enqueue(tenant_id=tenant_id, message_id=message_id)
    webhooks.webhook_enqueue(tenant_id=tenant_id, event="escalation.message", escalation_id=escalation_id,
                             audiences=escalation.trace.audiences, data={
        "escalation": escalation_body(escalation),
        "message": {"author": message.author_kind, "body": message.body, "created_at": message.created_at.isoformat()},
    })


def escalation_message(*, escalation: Escalation, message: EscalationMessage) -> None:
    tenant_id, escalation_id, message_id = escalation.tenant_id, escalation.pk, message.pk
    _after_commit(lambda: _message(tenant_id, escalation_id, message_id))


def _resolved(tenant_id: int, escalation_id: int) -> None:
    escalation = _load(tenant_id, escalation_id)
    if escalation is not None:
        webhooks.webhook_enqueue(tenant_id=tenant_id, event="escalation.resolved", escalation_id=escalation_id,
                                 audiences=escalation.trace.audiences, data={"escalation": escalation_body(escalation)})


def escalation_resolved(*, escalation: Escalation) -> None:
    tenant_id, escalation_id = escalation.tenant_id, escalation.pk
    _after_commit(lambda: _resolved(tenant_id, escalation_id))


def _feedback(tenant_id: int, trace_id: int) -> None:
    with tenant_context(tenant_id):
        trace = Trace.objects.filter(pk=trace_id, tenant_id=tenant_id).first()
    if trace is None or trace.feedback is None:
        return
    webhooks.webhook_enqueue(tenant_id=tenant_id, event="feedback.created", trace_id=trace_id,
                             audiences=trace.audiences, data={"feedback": {
        "trace_id": trace.pk, "vote": trace.feedback, "comment": trace.feedback_comment, "question": trace.question,
        "answer": trace.answer, "action": trace.action}})


def feedback_created(*, tenant_id: int, trace_id: int) -> None:
    _after_commit(lambda: _feedback(tenant_id, trace_id))
