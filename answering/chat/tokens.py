"""Signed tickets the chat page hands out: feedback on an answer the visitor was shown.

The stream of an answer is no longer a signed token: the question waits server-side behind
a one-time id (answering/chat/pending.py, docs/decisions/0034), because a signed token that
carries its own audiences is only as safe as the secret key, and puts the question in a URL.
"""

from __future__ import annotations

from typing import Any

from django.core import signing

FEEDBACK_SALT = "answerdesk.chat.feedback"
# Votes may come a while after the answer; a day covers a long-open tab.
FEEDBACK_MAX_AGE_SECONDS = 24 * 3600


class TokenInvalid(Exception):
    """Bad signature or expired."""


class TokenForeign(TokenInvalid):
    """Validly signed, but issued for another tenant: answered like an unknown page."""


def feedback_ticket_issue(*, tenant_id: int, trace_id: int) -> str:
    return signing.dumps({"t": tenant_id, "r": trace_id}, salt=FEEDBACK_SALT)


def feedback_ticket_read(*, ticket: str, tenant_id: int) -> int:
    """The trace id the ticket was issued for; TokenInvalid if it was not issued by this tenant's page."""
    try:
        payload: dict[str, Any] = signing.loads(ticket, salt=FEEDBACK_SALT, max_age=FEEDBACK_MAX_AGE_SECONDS)
    except signing.BadSignature as exc:
        raise TokenInvalid(str(exc)) from exc
    if payload.get("t") != tenant_id:
        raise TokenForeign("issued for another tenant")
    return int(payload["r"])
