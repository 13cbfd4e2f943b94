"""The escalation queue's writes: claim, reply, resolve. The knowledge-base article a resolution
may become is written apart, in answering/console/articles.py (docs/decisions/0104).

open → claimed → resolved. Each transition is a conditional UPDATE on the current status, so
two agents clicking at once cannot both win; the loser gets EscalationConflict and a message.
Every write runs inside the escalation's tenant context (row-level security is forced).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.utils import timezone

from answering.handoff import events
from answering.handoff.followups import message_add
from answering.models import Escalation, EscalationMessage
from tenants.rls import tenant_context

# From the widest readership to the narrowest: an article is drafted for the narrowest.
AUDIENCE_ORDER = ("public", "customer", "internal")
MAX_NOTE_CHARS = 20_000


class EscalationConflict(ValueError):
    """The escalation is not in a state that allows this transition (someone else moved it)."""


def ticket_slug(escalation: Escalation) -> str:
    return f"ESC-{escalation.pk}"


def _reload(escalation: Escalation) -> Escalation:
    return Escalation.objects.select_related("assignee", "tenant").get(tenant_id=escalation.tenant_id, pk=escalation.pk)


def escalation_claim(*, escalation: Escalation, user: Any) -> Escalation:
    """Take an open escalation (or re-take your own claim, which is a no-op)."""
    with tenant_context(escalation.tenant_id):
        moved = Escalation.objects.filter(pk=escalation.pk, tenant_id=escalation.tenant_id,
                                          status=Escalation.Status.OPEN).update(
            status=Escalation.Status.CLAIMED, assignee=user, claimed_at=timezone.now())
        current = _reload(escalation)
    if not moved and not (current.status == Escalation.Status.CLAIMED and current.assignee_id == user.pk):
        holder = f" by {current.assignee}" if current.assignee_id else ""
        raise EscalationConflict(f"escalation #{current.pk} is already {current.status}{holder}")
    return current


def escalation_resolve(*, escalation: Escalation, user: Any, note: str = "") -> Escalation:
    """Resolve an open or claimed escalation. Resolving an open one claims it on the way.

    The note may be empty (spam, a duplicate); only a resolution with a note can become a
    document, because the note is what the next customer will be told."""
    note = (note or "").strip()
    if len(note) > MAX_NOTE_CHARS:
        raise ValueError(f"the note is {len(note)} characters; the limit is {MAX_NOTE_CHARS}")
    now = timezone.now()
    # An empty note never overwrites one written earlier (a bulk resolve carries none).
    written: dict[str, Any] = {"status": Escalation.Status.RESOLVED, "resolved_at": now}
    if note:
        written["resolution_note"] = note
    with tenant_context(escalation.tenant_id):
        rows = Escalation.objects.filter(pk=escalation.pk, tenant_id=escalation.tenant_id)
        moved = rows.filter(status=Escalation.Status.OPEN).update(assignee=user, claimed_at=now, **written)
        if not moved:
            # A claim by someone else does not block: resolving is the team's job, the claim
            # only says who is on it. The assignee stays whoever claimed it.
            moved = rows.filter(status=Escalation.Status.CLAIMED).update(**written)
        current = _reload(escalation)
        if moved:
            events.escalation_resolved(escalation=current)
    if not moved:
        raise EscalationConflict(f"escalation #{current.pk} is already {current.status}")
    return current


def agent_replies_text(*, escalation: Escalation) -> str:
    """The agents' replies in order: what the asker was told, and so the resolution a ticket carries."""
    with tenant_context(escalation.tenant_id):
        # Index: answering_escalation_message_thread_idx (tenant_id, escalation_id, created_at).
        bodies = EscalationMessage.objects.filter(
            tenant_id=escalation.tenant_id, escalation_id=escalation.pk,
            author_kind=EscalationMessage.Kind.AGENT).order_by("created_at", "id").values_list("body", flat=True)
        return "\n\n".join(bodies)


def escalation_reply(*, escalation: Escalation, user: Any, body: str, resolve: bool = False) -> Escalation:
    """An agent's reply: into the thread, onto the asker's follow-up page, and by email when the
    escalation has a contact (after the commit). With `resolve`, the escalation is resolved in
    the same step and its resolution note is the agents' replies, nothing the client sent."""
    body = (body or "").strip()
    if len(body) > MAX_NOTE_CHARS:
        raise ValueError(f"the reply is {len(body)} characters; the limit is {MAX_NOTE_CHARS}")
    if escalation.status == Escalation.Status.RESOLVED and resolve:
        raise EscalationConflict(f"escalation #{escalation.pk} is already resolved")
    message_add(escalation=escalation, kind=EscalationMessage.Kind.AGENT, body=body, author_id=user.pk)
    if escalation.status == Escalation.Status.OPEN and not resolve:
        try:
            escalation_claim(escalation=escalation, user=user)  # who answered is who is on it
        except EscalationConflict:
            pass
    if resolve:
        return escalation_resolve(escalation=escalation, user=user, note=agent_replies_text(escalation=escalation))
    with tenant_context(escalation.tenant_id):
        return _reload(escalation)


def _each(write: Callable[..., Escalation], escalations: Sequence[Escalation], user: Any) -> tuple[int, list[str]]:
    """Apply one write to a selection: how many took, and why the others did not."""
    done, refused = 0, []
    for escalation in escalations:
        try:
            write(escalation=escalation, user=user)
            done += 1
        except EscalationConflict as exc:
            refused.append(str(exc))
    return done, refused


def escalations_claim(*, escalations: Sequence[Escalation], user: Any) -> tuple[int, list[str]]:
    """The admin action over a selection: how many were claimed, and why the others were not."""
    return _each(escalation_claim, escalations, user)


def escalations_resolve(*, escalations: Sequence[Escalation], user: Any) -> tuple[int, list[str]]:
    return _each(escalation_resolve, escalations, user)
