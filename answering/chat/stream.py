"""The answer as server-sent events: `sources` (HTML), `token` (escaped text pieces), `done` (HTML).

The framing and the response (paced one event at a time under ASGI) are answering/sse.py's,
shared with the API.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import assert_never

from django.utils.html import escape

from answering.pipeline.config import configuration
from answering.pipeline.conversations import chat_principal, conversation_bound
from answering.pipeline.flow import Delta, Done, Event, Sources, answer_stream
from answering.pipeline.limits import QuestionRejected
from answering.chat import render
from answering.chat.pending import PendingAsk
from answering.sse import sse
from tenants.models import Tenant

logger = logging.getLogger(__name__)


def event_bytes(event: Event, *, tenant: Tenant, turn_id: str, contact: str = "") -> bytes:
    """One pipeline event as the page reads it: the sources and the end of the turn as HTML, the text escaped."""
    match event:
        case Sources(sources=sources):
            return sse(render.sources_html(sources=sources, turn_id=turn_id, final=False), event=event.kind)
        case Delta(text=text):
            return sse(str(escape(text)), event=event.kind)
        case Done(result=result):
            return sse(render.done_html(tenant_slug=tenant.slug, tenant_id=tenant.id, turn_id=turn_id, result=result,
                                        contact=contact), event=event.kind)
        case _:
            assert_never(event)


def chat_events(*, tenant: Tenant, ask: PendingAsk, audiences: list[str], contact: str = "") -> Iterator[bytes]:
    """Every stream ends with exactly one `done`, also on failure: the page closes the
    connection on it, and without it the browser's EventSource would reconnect and ask again.
    `audiences` come from the signed-in user when the stream starts, never from the pending ask;
    so does `contact`, a member's account email for the escalation (empty for visitors)."""
    conversation_id = conversation_bound(principal=chat_principal(user_id=ask.user_id, audiences=audiences),
                                         client_id=ask.conversation_id)
    try:
        for event in answer_stream(tenant=tenant, audiences=audiences, question=ask.question, history=ask.history,
                                   conversation_id=conversation_id, contact=contact, config=configuration()):
            yield event_bytes(event, tenant=tenant, turn_id=ask.turn_id, contact=contact)
    except QuestionRejected as exc:
        yield sse(render.failed_html(message=str(exc)), event="done")
    except Exception:
        # The status line is long gone; the visitor still needs an ending and we need the traceback.
        logger.exception("chat stream failed for tenant %s", tenant.slug)
        yield sse(render.failed_html(message="Something went wrong while answering. Please try again in a moment."),
                  event="done")


def failed_events(*, message: str) -> Iterator[bytes]:
    yield sse(render.failed_html(message=message), event="done")

