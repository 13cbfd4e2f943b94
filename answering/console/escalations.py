"""The escalation queue's writes: claim, resolve, and turn a resolution into a ticket document.

open → claimed → resolved. Each transition is a conditional UPDATE on the current status, so
two agents clicking at once cannot both win; the loser gets EscalationConflict and a message.
Every write runs inside the escalation's tenant context (row-level security is forced).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from answering.handoff import events
from answering.handoff.followups import message_add
from answering.models import Escalation, EscalationMessage, Trace
from corpus.sources.jobs import ingest_job_create
from corpus.models import IngestJob
from tenants.models import Audience
from tenants.staff import member_audience_slugs
from tenants.rls import tenant_context

# From the widest readership to the narrowest: a resolution is filed for the narrowest
# audience the asker had, so an agent's note never reaches readers the asker was not among.
AUDIENCE_ORDER = ("public", "customer", "internal")
MAX_NOTE_CHARS = 20_000


class EscalationConflict(ValueError):
    """The escalation is not in a state that allows this transition (someone else moved it)."""


def ticket_slug(escalation: Escalation) -> str:
    return f"ESC-{escalation.pk}"


def _reload(escalation: Escalation) -> Escalation:
    return Escalation.objects.select_related("assignee", "tenant").get(pk=escalation.pk)


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


def default_audience(*, escalation: Escalation) -> str:
    """The narrowest audience the asker read with (the trace records their audience slugs)."""
    with tenant_context(escalation.tenant_id):
        asked_with = Trace.objects.filter(pk=escalation.trace_id).values_list("audiences", flat=True).first() or []
    ranked = [slug for slug in AUDIENCE_ORDER if slug in asked_with]
    return ranked[-1] if ranked else "public"


def _ticket_entry(escalation: Escalation, audience: str) -> dict[str, Any]:
    """The asker's words and the agent's note, nothing else. The history came from the client:
    an "assistant" turn in it was never said by us, and filed here it would be retrieved and
    cited as the company's own answer. The asker's earlier questions give the question its
    meaning ("what about the backoff?") and are theirs, so they stay, marked as theirs."""
    earlier = [str(turn.get("content", "")) for turn in escalation.history or [] if turn.get("role") == "user"]
    question = escalation.question
    if earlier:
        question += "\n\nThe asker's earlier messages:\n" + "\n".join(f"- {text}" for text in earlier if text)
    return {
        "id": ticket_slug(escalation),
        "subject": escalation.question[:200],
        "question": question,
        "resolution": escalation.resolution_note,
        "resolved_at": (escalation.resolved_at or timezone.now()).date().isoformat(),
        "audience": audience,
    }


def escalation_to_document(*, escalation: Escalation, user: Any, audience: str | None = None) -> IngestJob:
    """Queue the resolved question and its note as a ticket document through the upload path.

    The same ingest job an upload makes (corpus.sources.jobs), so the agent watches it in the jobs
    list and the document is chunked, embedded and invalidates the cache like any other.
    Re-sending replaces the ticket (its slug is the escalation's), never duplicates it.
    """
    if escalation.status != Escalation.Status.RESOLVED or not escalation.resolution_note.strip():
        raise EscalationConflict(f"escalation #{escalation.pk} must be resolved with a note first")
    audience = audience or default_audience(escalation=escalation)
    if not Audience.objects.filter(tenant_id=escalation.tenant_id, slug=audience).exists():
        raise ValueError(f"tenant has no audience {audience!r}")
    payload = json.dumps([_ticket_entry(escalation, audience)], ensure_ascii=False, indent=2).encode()
    upload = SimpleUploadedFile(f"ticket-{ticket_slug(escalation)}.json", payload, content_type="application/json")
    job = ingest_job_create(tenant=escalation.tenant, files=[upload], audience=audience, source_type="ticket",
                            created_by_id=user.pk, origin="escalation",
                            # The primary key, never public_id: that is the asker's way back in.
                            origin_ref=f"escalation #{escalation.pk}",
                            writer_audiences=member_audience_slugs(user=user, tenant_id=escalation.tenant_id))
    with tenant_context(escalation.tenant_id):
        Escalation.objects.filter(pk=escalation.pk, tenant_id=escalation.tenant_id).update(knowledge_job=job)
    escalation.knowledge_job = job
    return job


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
