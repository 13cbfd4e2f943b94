"""POST /ask (JSON, or server-sent events) and POST /feedback. Thin: validate, call, render.

The tenant and the audiences come from the API key (`request.auth`), never from the body.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any, Literal, assert_never

from django.http import HttpRequest
from django.utils import translation
from ninja import Field, Router, Schema, Status

from answering.language import asker_language, in_active_language
from answering.handoff.followups import ContactInvalid, contact_given
from answering.handoff.links import follow_up_object
from answering.pipeline.flow import AnswerResult, Ask, Delta, Done, Event, Sources, answer, answer_stream
from answering.pipeline.limits import (MAX_CONVERSATION_ID_CHARS, MAX_HISTORY_TURNS, MAX_QUESTION_CHARS,
                                       QuestionRejected)
from answering.pipeline.citations import Source
from answering.pipeline.config import configuration
from answering.pipeline.conversations import conversation_bound, key_principal
from answering.pipeline.records import feedback_record
from answering.sse import EventStreamResponse, sse
from tenants.apierrors import InvalidRequest, NotFound
from tenants.apikeys import request_principal
from tenants.apitypes import STRICT, JsonInt, Vote

log = logging.getLogger(__name__)
MAX_COMMENT_CHARS = 2000

router = Router(tags=["answers"])


class ErrorDetail(Schema):
    code: str
    message: str


class ErrorOut(Schema):
    error: ErrorDetail


ERRORS = {400: ErrorOut, 401: ErrorOut, 413: ErrorOut, 415: ErrorOut, 422: ErrorOut, 429: ErrorOut}


class Turn(Schema):
    model_config = STRICT

    role: Literal["user", "assistant"]
    content: str = Field(..., max_length=MAX_QUESTION_CHARS)


class AskIn(Schema):
    # The example shows in the docs and is the first request schemathesis sends.
    model_config = {**STRICT, "json_schema_extra": {"examples": [{"question": "What does error PL-4031 mean?"}]}}

    question: str = Field(..., min_length=1, max_length=MAX_QUESTION_CHARS)
    history: list[Turn] = Field(default_factory=list, max_length=MAX_HISTORY_TURNS,
                                description="Earlier turns, oldest first; the server keeps no session.")
    conversation_id: str = Field("", max_length=MAX_CONVERSATION_ID_CHARS)
    contact: str | None = Field(None, max_length=254, json_schema_extra={"format": "email"},
                         description="Optional email of the asker: on an abstention the agent's reply is also sent "
                                     "there.")
    stream: bool = Field(False, description="Server-sent events (also chosen by Accept: text/event-stream).")


# The pipeline's Source is the one list of a source's fields; this names it for the API's document.
class SourceOut(Source):
    """A cited document: `number` is its [n] in the answer; where the passage sits, and a snippet of it."""


class FollowUpOut(Schema):
    """On an abstention: the asker's way back. `url` is the follow-up page (question, status,
    the agents' replies); `id` is opaque and random, never the escalation's number."""

    id: str
    url: str


class AskOut(Schema):
    action: Literal["greeting", "answered", "escalated"]
    answer: str
    sources: list[SourceOut]
    trace_id: int | None
    escalation_id: int | None
    follow_up: FollowUpOut | None
    conversation_id: str
    cache_hit: bool
    conflict: bool


class FeedbackIn(Schema):
    model_config = STRICT

    trace_id: JsonInt = Field(..., ge=1)
    vote: Vote
    comment: str = Field("", max_length=MAX_COMMENT_CHARS)


class FeedbackOut(Schema):
    recorded: bool


def result_body(result: AnswerResult, *, conversation_id: str, tenant_slug: str) -> dict[str, Any]:
    return {"action": result.action, "answer": result.text, "sources": result.sources, "trace_id": result.trace_id,
            "escalation_id": result.escalation_id,
            "follow_up": follow_up_object(tenant_slug=tenant_slug, public_id=result.follow_up_id),
            "conversation_id": conversation_id,
            "cache_hit": result.cache_hit, "conflict": result.conflict}


def _wants_stream(request: HttpRequest, body: AskIn) -> bool:
    return body.stream or "text/event-stream" in request.headers.get("Accept", "")


def event_bytes(event: Event, *, conversation_id: str, tenant_slug: str) -> bytes:
    """One pipeline event as this API sends it: JSON under the event's own name."""
    match event:
        case Sources(sources=sources):
            data: dict[str, Any] = {"sources": sources}
        case Delta(text=text):
            data = {"text": text}
        case Done(result=result):
            data = result_body(result, conversation_id=conversation_id, tenant_slug=tenant_slug)
        case _:
            assert_never(event)
    return sse(data, event=event.kind)


def _events(events: Iterator[Event], *, conversation_id: str, tenant_slug: str) -> Iterator[bytes]:
    try:
        for event in events:
            yield event_bytes(event, conversation_id=conversation_id, tenant_slug=tenant_slug)
    except Exception:
        # The status line is gone; the client still needs to know this stream will not finish.
        log.exception("ask stream failed")
        yield sse({"error": {"code": "internal_error", "message": "the answer failed midway; please retry"}},
                  event="error")


_ASK_200 = {"description": "The answer, as JSON or as server-sent events", "content": {
    "application/json": {"schema": {"$ref": "#/components/schemas/AskOut"}},
    # OpenAPI 3.1 reads an event stream's schema as the schema of each event.
    "text/event-stream": {"schema": {
        "type": "object", "required": ["event", "data"],
        "description": "`sources` (what retrieval found), then `token`…, then `done` (an AskOut with the trace "
                       "id); `error` instead of `done` if the answer fails midway",
        "properties": {"event": {"enum": ["sources", "token", "done", "error"]},
                       "data": {"type": "string", "contentMediaType": "application/json"}},
    }},
}}


@router.post("/ask", response={200: AskOut, **ERRORS}, summary="Ask a question; cited answer or escalation",
             openapi_extra={"responses": {"200": _ASK_200}})
def ask(request: HttpRequest, body: AskIn) -> Any:
    principal = request_principal(request)
    try:
        contact = contact_given(body.contact)
    except ContactInvalid as exc:
        raise InvalidRequest(f"contact: {exc}") from exc
    # Stored bound to this key; the client keeps reading back the id it sent (docs/decisions/0093).
    conversation_id = conversation_bound(principal=key_principal(api_key_id=principal.api_key.pk),
                                         client_id=body.conversation_id)
    arguments = Ask(tenant=principal.tenant, audiences=list(principal.audiences), question=body.question,
                    history=[turn.dict() for turn in body.history], conversation_id=conversation_id,
                    contact=contact, config=configuration())
    slug = principal.tenant.slug
    # The abstention and greeting texts in the asker's language, the tenant's by default (0050):
    # the chat page's rule, so a Czech help centre's API clients read Czech too.
    with translation.override(asker_language(request=request, tenant=principal.tenant)):
        try:
            if not _wants_stream(request, body):
                return Status(200, result_body(answer(**arguments), conversation_id=body.conversation_id,
                                               tenant_slug=slug))
            # Retrieval runs here, before the response starts: a rejected question is a 422, not a broken stream.
            events = answer_stream(**arguments)
        except QuestionRejected as exc:
            raise InvalidRequest(str(exc)) from exc
        return EventStreamResponse(in_active_language(
            _events(events, conversation_id=body.conversation_id, tenant_slug=slug)))


@router.post("/feedback", response={200: FeedbackOut, 404: ErrorOut, **ERRORS},
             summary="Thumbs up (1) or down (-1) on an answer, with an optional comment")
def feedback(request: HttpRequest, body: FeedbackIn) -> Any:
    principal = request_principal(request)
    if not feedback_record(tenant=principal.tenant, audiences=list(principal.audiences), trace_id=body.trace_id,
                           vote=body.vote, comment=body.comment):
        raise NotFound(f"no trace {body.trace_id}")
    return Status(200, {"recorded": True})
