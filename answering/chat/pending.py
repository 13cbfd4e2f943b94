"""Questions waiting for their event stream: stored by the POST, claimed once by the GET.

The stream is an `EventSource` GET, which carries no body, so the question has to wait
somewhere between the two requests. It waits here, server-side, under a random one-time id
(docs/decisions/0034): the URL carries only that id, so neither the question nor the
history ends up in an access log, and nothing in the URL says what the visitor may read.
The audiences are not stored at all; the stream recomputes them from the signed-in user.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from tenants.rls import tenant_context

PENDING_TTL_SECONDS = 60
# Expired rows of the tenant deleted per store: a small bound keeps the POST cheap, and each
# POST removes more than it adds, so the table stays at about one minute of questions.
_SWEEP_LIMIT = 50

# The time is the app's, passed as %(now)s: Citus refuses a VOLATILE clock_timestamp() in the
# WHERE of a DELETE on a distributed table (docs/decisions/0121), and one clock for the store and
# the claim keeps them agreeing.
# answering_pendingask_tenant_expires_idx (tenant_id, expires_at) finds the expired rows.
_SWEEP = """
DELETE FROM answering_pendingask
 WHERE id IN (SELECT id FROM answering_pendingask
               WHERE tenant_id = %(tenant)s AND expires_at < %(now)s
               LIMIT %(limit)s)
   AND tenant_id = %(tenant)s
"""

_INSERT = """
INSERT INTO answering_pendingask (id, tenant_id, user_id, question, history, conversation_id, turn_id, expires_at)
VALUES (%(id)s, %(tenant)s, %(user)s, %(question)s, %(history)s::jsonb, %(conversation)s, %(turn)s, %(expires)s)
"""

# The primary key finds the row; DELETE ... RETURNING makes the claim atomic: of two GETs
# racing for one id, exactly one gets the row.
_CLAIM = """
DELETE FROM answering_pendingask
 WHERE id = %(id)s AND tenant_id = %(tenant)s AND user_id IS NOT DISTINCT FROM %(user)s
   AND expires_at >= %(now)s
RETURNING user_id, question, history, conversation_id, turn_id
"""

# Primary key: is the id live but held for another visitor?
_HELD_BY_ANOTHER = """
SELECT 1 FROM answering_pendingask
 WHERE id = %(id)s AND tenant_id = %(tenant)s AND user_id IS DISTINCT FROM %(user)s
   AND expires_at >= %(now)s
"""


class PendingUnknown(Exception):
    """No such id for this tenant: never issued, expired, or already answered."""


class PendingForeign(PendingUnknown):
    """Issued for another tenant or another visitor: answered like an unknown page, and left for its owner."""


@dataclass(frozen=True)
class PendingAsk:
    tenant_id: int
    user_id: int | None
    question: str
    history: list[dict[str, str]]
    conversation_id: str
    turn_id: str  # the DOM id of the turn the stream fills; made by the POST, never by the visitor


def pending_ask_store(*, ask: PendingAsk) -> str:
    """Keep `ask` for PENDING_TTL_SECONDS; returns the one-time id for the stream URL.

    The tenant id prefixes the random part so that a GET on another tenant's page is told
    apart (a 404) without reading across tenants; the random part is the secret.
    """
    pending_id = f"{int(ask.tenant_id)}.{secrets.token_urlsafe(32)}"
    now = timezone.now()
    with tenant_context(ask.tenant_id) as cursor:
        cursor.execute(_SWEEP, {"tenant": ask.tenant_id, "limit": _SWEEP_LIMIT, "now": now})
        cursor.execute(_INSERT, {
            "id": pending_id, "tenant": ask.tenant_id, "user": ask.user_id, "question": ask.question,
            "history": json.dumps(ask.history), "conversation": ask.conversation_id, "turn": ask.turn_id,
            "expires": now + timedelta(seconds=PENDING_TTL_SECONDS),
        })
    return pending_id


def pending_ask_claim(*, pending_id: str, tenant_id: int, user_id: int | None) -> PendingAsk:
    """Take the question stored under `pending_id`; it is gone afterwards, so it answers once.

    PendingForeign for another tenant's id or another visitor's (the row stays for its
    owner); PendingUnknown for an id that is not, or no longer, waiting."""
    prefix, dot, secret = pending_id.partition(".")
    if not dot or not prefix.isdigit() or not secret or len(pending_id) > 96:
        raise PendingUnknown("malformed id")
    if int(prefix) != tenant_id:
        raise PendingForeign("issued for another tenant")
    params = {"id": pending_id, "tenant": tenant_id, "user": user_id, "now": timezone.now()}
    with tenant_context(tenant_id) as cursor:
        cursor.execute(_CLAIM, params)
        row = cursor.fetchone()
        if row is None:
            cursor.execute(_HELD_BY_ANOTHER, params)
            held = cursor.fetchone() is not None
    if row is None:
        raise PendingForeign("issued for another visitor") if held else PendingUnknown("not waiting")
    user, question, history, conversation_id, turn_id = row
    if isinstance(history, str):  # jsonb arrives decoded or as text, depending on the driver's loaders
        history = json.loads(history)
    return PendingAsk(tenant_id=tenant_id, user_id=user, question=str(question), history=list(history),
                      conversation_id=str(conversation_id), turn_id=str(turn_id))
