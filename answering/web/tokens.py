"""Signed, short-lived tokens that carry a question from the POST to its event stream.

The server keeps no conversation state (docs/decisions/0016-chat-stream-token.md): the POST
validates the question and signs everything the stream needs; the GET verifies the
signature, the age, the tenant and the visitor before it answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core import signing

STREAM_SALT = "answerdesk.chat.stream"
FEEDBACK_SALT = "answerdesk.chat.feedback"
STREAM_MAX_AGE_SECONDS = 60
# Votes may come a while after the answer; a day covers a long-open tab.
FEEDBACK_MAX_AGE_SECONDS = 24 * 3600


class TokenInvalid(Exception):
    """Bad signature or expired."""


class TokenForeign(TokenInvalid):
    """Validly signed, but issued for another tenant or visitor: answered like an unknown page."""


@dataclass(frozen=True)
class StreamRequest:
    tenant_id: int
    user_id: int | None
    audiences: list[str]
    question: str
    history: list[dict[str, str]]
    conversation_id: str
    turn_id: str  # the DOM id of the turn the stream fills; made by the POST, never by the visitor


def stream_token_issue(*, request: StreamRequest) -> str:
    payload = {"t": request.tenant_id, "u": request.user_id, "a": request.audiences, "q": request.question,
               "h": request.history, "c": request.conversation_id, "d": request.turn_id}
    # compress: the token rides in a URL, and history text compresses well.
    return signing.dumps(payload, salt=STREAM_SALT, compress=True)


def stream_token_read(*, token: str, tenant_id: int, user_id: int | None) -> StreamRequest:
    try:
        payload: dict[str, Any] = signing.loads(token, salt=STREAM_SALT, max_age=STREAM_MAX_AGE_SECONDS)
    except signing.BadSignature as exc:  # SignatureExpired is a BadSignature
        raise TokenInvalid(str(exc)) from exc
    if payload.get("t") != tenant_id or payload.get("u") != user_id:
        raise TokenForeign("issued for another tenant or visitor")
    return StreamRequest(tenant_id=payload["t"], user_id=payload["u"], audiences=list(payload["a"]),
                         question=str(payload["q"]), history=list(payload["h"]), conversation_id=str(payload["c"]),
                         turn_id=str(payload["d"]))


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
