"""POST /chat/completions and GET /models in OpenAI's wire format (mounted at /api/v1/openai/).

Thin: parse the messages (answering/api/openai_messages.py), call the same pipeline as /ask,
render a `chat.completion` or a stream of `chat.completion.chunk` events ending in
`data: [DONE]`. Errors are rendered in OpenAI's shape by config/api.py.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from django.http import HttpRequest, JsonResponse
from ninja import Field, Router, Schema
from ninja import Path as PathParam
from pydantic import BaseModel

from answering.sse import is_asgi, sse, sse_response
from answering.api.openai_messages import (
    MODELS, Conversation, conversation_from, extension, model_uses_chain, openai_request_record, sources_footer,
    usage,
)
from answering.api.openai_schemas import ERRORS, STREAMED, ChatCompletionOut, ModelListOut, ModelOut
from answering.pipeline.flow import AnswerResult, Event, QuestionRejected, answer, answer_stream
from tenants.apierrors import InvalidRequest
from tenants.apikeys import KeyPrincipal
from tenants.apitypes import JSON_INTEGER, STRICT

log = logging.getLogger(__name__)
router = Router(tags=["openai"])
MAX_MESSAGES = 200
MAX_MESSAGE_CHARS = 32_000


class ContentPart(Schema):
    model_config = STRICT

    type: str = Field(..., max_length=32)
    text: str | None = Field(None, max_length=MAX_MESSAGE_CHARS)


class ChatMessage(Schema):
    model_config = STRICT

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = Field(None, max_length=MAX_MESSAGE_CHARS)
    name: str | None = Field(None, max_length=256)


class StreamOptions(BaseModel):
    # Not a ninja Schema: its validator reads attributes off any object, so with every field
    # defaulted a list or a string passed as a valid StreamOptions (found by schemathesis).
    model_config = STRICT

    include_usage: bool = False


class ChatIn(Schema):
    # The example shows in the docs and is the first request schemathesis sends.
    model_config = {**STRICT, "json_schema_extra": {"examples": [
        {"model": "answerdesk", "messages": [{"role": "user", "content": "What does error PL-4031 mean?"}]}]}}

    model: str = Field(..., min_length=1, max_length=100)
    messages: list[ChatMessage] = Field(..., min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    # Accepted and bounded like OpenAI's; recorded on the trace. The answer policy (temperature 0,
    # the server's token budget) is ours, so they do not change what is said.
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: Annotated[int, Field(ge=1, le=131_072), JSON_INTEGER] | None = None
    max_completion_tokens: Annotated[int, Field(ge=1, le=131_072), JSON_INTEGER] | None = None
    n: Annotated[int, Field(ge=1, le=1), JSON_INTEGER] | None = None
    user: str | None = Field(None, max_length=256)


def _completion_text(result: AnswerResult) -> str:
    return result.text + sources_footer(result)


def _record(principal: KeyPrincipal, body: ChatIn, conversation: Conversation, result: AnswerResult) -> None:
    openai_request_record(tenant=principal.tenant, trace_id=result.trace_id, model=body.model,
                          system=conversation.system, temperature=body.temperature,
                          max_tokens=body.max_tokens or body.max_completion_tokens)


@router.post("/chat/completions", response={200: ChatCompletionOut, **ERRORS},
             summary="Chat Completions: a cited, tenant-scoped answer", openapi_extra=STREAMED)
def chat_completions(request: HttpRequest, body: ChatIn) -> Any:
    principal: KeyPrincipal = request.auth  # type: ignore[attr-defined]
    uses_chain = model_uses_chain(body.model)
    conversation = conversation_from(body.messages, user=body.user)
    arguments = {"tenant": principal.tenant, "audiences": list(principal.audiences),
                 "question": conversation.question, "history": conversation.history,
                 "conversation_id": conversation.conversation_id, "use_default_chain": uses_chain}
    completion_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    try:
        if not body.stream:
            result = answer(**arguments)
        else:
            events = answer_stream(**arguments)
            first = next(events)  # a rejected question is a 400 here, not a broken stream
    except QuestionRejected as exc:
        raise InvalidRequest(str(exc)) from exc
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        chunks = _chunks(principal, body, conversation, first, events, completion_id=completion_id,
                         created=created, include_usage=include_usage)
        return sse_response(chunks, asynchronous=is_asgi(request))
    _record(principal, body, conversation, result)
    return JsonResponse({
        "id": completion_id, "object": "chat.completion", "created": created, "model": body.model,
        "system_fingerprint": None,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": _completion_text(result),
                                             "refusal": None},
                     "finish_reason": "stop", "logprobs": None}],
        "usage": usage(tenant=principal.tenant, result=result),
        "answerdesk": extension(result),
    })


def _chunks(principal: KeyPrincipal, body: ChatIn, conversation: Conversation, first: Event,
            rest: Iterator[Event], *, completion_id: str, created: int, include_usage: bool) -> Iterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return sse({"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": body.model,
                    "system_fingerprint": None,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
                    **({"usage": None} if include_usage else {}), **extra})

    # What retrieval found goes out before any text, on the role chunk; the final chunk carries
    # the sources the answer actually cites.
    yield chunk({"role": "assistant", "content": ""}, answerdesk={"candidate_sources": first[1]})
    try:
        for kind, payload in rest:
            if kind == "token":
                yield chunk({"content": payload})
            elif kind == "done":
                result: AnswerResult = payload
                footer = sources_footer(result)
                if footer:
                    yield chunk({"content": footer})
                _record(principal, body, conversation, result)
                yield chunk({}, "stop", answerdesk=extension(result))
                if include_usage:
                    yield sse({"id": completion_id, "object": "chat.completion.chunk", "created": created,
                               "model": body.model, "system_fingerprint": None, "choices": [],
                               "usage": usage(tenant=principal.tenant, result=result)})
    except Exception:
        # Headers are gone; an error event makes the SDK raise instead of showing half an answer as whole.
        log.exception("chat completion stream failed for tenant %s", principal.tenant.slug)
        yield sse({"error": {"message": "the answer failed midway; please retry", "type": "server_error",
                             "param": None, "code": "internal_error"}})
        return
    yield sse("[DONE]")


@router.get("/models", response={200: ModelListOut, **ERRORS}, summary="The models this key can use")
def models(request: HttpRequest) -> Any:
    principal: KeyPrincipal = request.auth  # type: ignore[attr-defined]
    return JsonResponse({"object": "list", "data": [_model(principal, name) for name in MODELS]})


@router.get("/models/{model_id}", response={200: ModelOut, **ERRORS}, summary="One model")
def model_detail(request: HttpRequest, model_id: str = PathParam(..., example="answerdesk-extractive")) -> Any:
    principal: KeyPrincipal = request.auth  # type: ignore[attr-defined]
    model_uses_chain(model_id)
    return JsonResponse(_model(principal, model_id))


def _model(principal: KeyPrincipal, name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": int(principal.tenant.created_at.timestamp()),
            "owned_by": f"answerdesk:{principal.tenant.slug}"}
