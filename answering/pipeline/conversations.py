"""A conversation id as stored: the client's id bound to the principal that sent it (docs/decisions/0093).

Clients choose conversation ids (the REST body, the chat page's browser, the OpenAI endpoint's
first message), and erasure and export follow conversations: a person's traces are their
escalations' traces and every trace of the same conversations. So the stored id names the
principal too, and two principals sending the same string are two conversations. Each surface
binds the id it received before it reaches the pipeline; the client keeps its own id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from answering.pipeline.limits import MAX_CONVERSATION_ID_CHARS

_DIGEST_CHARS = 16


def _digest(text: str, chars: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:chars]


def key_principal(*, api_key_id: int) -> str:
    """An API key: its conversations are its own, whoever else picks the same id."""
    return f"k{api_key_id}"


def chat_principal(*, user_id: int | None, audiences: Sequence[str]) -> str:
    """The chat page and the embedded chat: a signed-in user, else anonymous visitors of one
    audience set (their ids are random per browser tab, and they leave no contact)."""
    if user_id is not None:
        return f"u{user_id}"
    return "v" + _digest(",".join(sorted(audiences)), 8)


def conversation_bound(*, principal: str, client_id: str) -> str:
    """`<principal>:<client id>`, within the column's 64 characters; '' stays '' (no conversation).

    The client's id is kept readable, so agents find `crm-ticket-1001` in the console search;
    one too long to fit keeps its head and ends in a digest of the whole."""
    if not client_id:
        return ""
    bound = f"{principal}:{client_id}"
    if len(bound) <= MAX_CONVERSATION_ID_CHARS:
        return bound
    head = client_id[: MAX_CONVERSATION_ID_CHARS - len(principal) - 2 - _DIGEST_CHARS]
    return f"{principal}:{head}~{_digest(client_id, _DIGEST_CHARS)}"
