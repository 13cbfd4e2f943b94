"""Writing traces and escalations. Every abstention leaves through `abstain` (one exit)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from answering.handoff import events
from answering.handoff.followups import new_public_id
from answering.models import Escalation, Trace
from tenants.models import Tenant
from tenants.rls import tenant_context


def trace_create(*, tenant: Tenant, fields: dict[str, Any]) -> Trace:
    with tenant_context(tenant.id):
        cost = Decimal(str(round(float(fields.pop("cost_usd", 0.0)), 6)))
        return Trace.objects.create(tenant=tenant, cost_usd=cost, **fields)


def abstain(*, tenant: Tenant, reason: str, detail: str, question: str, history: Sequence[dict[str, str]],
            candidates: Sequence[dict[str, Any]], trace_fields: dict[str, Any],
            contact_email: str = "") -> tuple[Trace, Escalation]:
    """The one exit for weak retrieval, a declining model and failing providers alike:
    one escalation row with its opaque follow-up id, one trace action, one sentence for the
    user; agents and the webhook hear of it after the commit (answering/handoff/events.py)."""
    if reason not in Escalation.Reason.values:
        raise ValueError(f"unknown escalation reason {reason!r}")
    with tenant_context(tenant.id):
        cost = Decimal(str(round(float(trace_fields.pop("cost_usd", 0.0)), 6)))
        trace = Trace.objects.create(tenant=tenant, action=Trace.Action.ESCALATED, cost_usd=cost, **trace_fields)
        escalation = Escalation.objects.create(
            tenant=tenant, trace=trace, conversation_id=trace.conversation_id, question=question,
            history=list(history), candidates=list(candidates), reason=reason, detail=detail[:2000],
            public_id=new_public_id(), contact_email=contact_email,
        )
        events.escalation_created(escalation=escalation)
    return trace, escalation


def person_requested(*, tenant: Tenant, audiences: Sequence[str], trace_id: int,
                     contact_email: str = "") -> Escalation | None:
    """The asker of an answered question asks for a person ("talk to a person"): the answer's
    trace gets the escalation an abstention would have had, and the same follow-up page. The
    trace must be one the asker could have been shown, as for a vote (`feedback_record`): of
    this tenant, asked within `audiences`; None, exactly as for an unknown trace, otherwise.
    Asking twice is one escalation (one per trace): the second ask gets the first's."""
    with tenant_context(tenant.id):
        trace = Trace.objects.filter(tenant=tenant, pk=trace_id, audiences__contained_by=list(audiences)).first()
        if trace is None:
            return None
        existing = Escalation.objects.filter(tenant=tenant, trace=trace).first()
        if existing is not None:
            return existing
        detail = "The asker asked for a person after this answer"
        if trace.feedback == -1:
            detail += ", which they rated not helpful"
        escalation = Escalation.objects.create(
            tenant=tenant, trace=trace, conversation_id=trace.conversation_id, question=trace.question,
            reason=Escalation.Reason.ASKER_REQUEST, detail=detail + ".", public_id=new_public_id(),
            contact_email=contact_email,
        )
        events.escalation_created(escalation=escalation)
    return escalation


def feedback_record(*, tenant: Tenant, audiences: Sequence[str], trace_id: int, vote: int, comment: str = "") -> bool:
    """Record a vote on a trace the voter could have been shown: of their tenant, and asked with
    audiences all within `audiences` (theirs). False, exactly as for an unknown trace, otherwise."""
    if vote not in (-1, 1):
        raise ValueError("vote must be 1 (up) or -1 (down)")
    with tenant_context(tenant.id):
        # jsonb <@: every audience the trace was asked with is one the voter holds.
        recorded = bool(Trace.objects.filter(tenant=tenant, pk=trace_id, audiences__contained_by=list(audiences))
                        .update(feedback=vote, feedback_comment=comment[:2000]))
        if recorded:
            events.feedback_created(tenant_id=tenant.id, trace_id=trace_id)
    return recorded


def trace_note(*, tenant: Tenant, trace_id: int, note: dict[str, Any]) -> None:
    """Merge `note` into a trace's details (what happened after the trace was written)."""
    with tenant_context(tenant.id) as cursor:
        # Index: answering_trace primary key (id); the tenant filter as on every table.
        cursor.execute(
            "UPDATE answering_trace SET details = details || %(note)s::jsonb WHERE tenant_id = %(t)s AND id = %(id)s",
            {"note": json.dumps(note, default=str), "t": tenant.id, "id": trace_id},
        )
