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
from dataclasses import dataclass
from typing import Annotated, Any, Literal, assert_never

from django.http import HttpRequest, JsonResponse
from django.utils import translation
from ninja import Field, Router, Schema
from ninja import Path as PathParam
from pydantic import BaseModel

from answering.sse import EventStreamResponse, sse
from answering.api.openai_messages import (
    MODELS, Conversation, conversation_from, extension, model_uses_chain, openai_request_record, sources_footer,
    usage,
)
from answering.api.openai_schemas import ERRORS, STREAMED, ChatCompletionOut, ModelListOut, ModelOut
from answering.language import asker_language, in_active_language
from answering.handoff.followups import ContactInvalid, contact_given
from answering.pipeline.config import configuration
from answering.pipeline.conversations import conversation_bound, key_principal
from answering.pipeline.flow import AnswerResult, Ask, Delta, Done, Event, Sources, answer, answer_stream
from answering.pipeline.limits import QuestionRejected
from tenants.apierrors import InvalidRequest
from tenants.apikeys import KeyPrincipal, request_principal
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
    content: str | list[ContentPart] | None = Field(default=None, max_length=MAX_MESSAGE_CHARS)
    name: str | None = Field(default=None, max_length=256)


class StreamOptions(BaseModel):
    # Not a ninja Schema: its validator reads attributes off any object, so with every field
    # defaulted a list or a string passed as a valid StreamOptions (found by schemathesis).
    model_config = STRICT

    include_usage: bool = False


class AnswerdeskIn(BaseModel):
    """Answerdesk's own request field (OpenAI clients send it with `extra_body`). A pydantic
    model, like StreamOptions: a ninja Schema would read a list as a valid object."""

    model_config = STRICT

    contact: str | None = Field(None, max_length=254, json_schema_extra={"format": "email"},
                         description="Optional email of the asker: on an abstention the agent's reply is also sent "
                                     "there.")


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
    answerdesk: AnswerdeskIn | None = None


def _completion_text(result: AnswerResult) -> str:
    return result.text + sources_footer(result)


@router.post("/chat/completions", response={200: ChatCompletionOut, **ERRORS},
             summary="Chat Completions: a cited, tenant-scoped answer", openapi_extra=STREAMED)
def chat_completions(request: HttpRequest, body: ChatIn) -> Any:
    principal = request_principal(request)
    uses_chain = model_uses_chain(body.model)
    conversation = conversation_from(body.messages, user=body.user)
    try:
        contact = contact_given(body.answerdesk.contact if body.answerdesk else None)
    except ContactInvalid as exc:
        raise InvalidRequest(f"answerdesk.contact: {exc}") from exc
    arguments = Ask(tenant=principal.tenant, audiences=list(principal.audiences), question=conversation.question,
                    history=conversation.history,
                    conversation_id=conversation_bound(principal=key_principal(api_key_id=principal.api_key.pk),
                                                       client_id=conversation.conversation_id),
                    use_default_chain=uses_chain, contact=contact, config=configuration())
    completion = _Completion(principal=principal, body=body, conversation=conversation,
                     completion_id=f"chatcmpl-{uuid.uuid4().hex}", created=int(time.time()),
                     include_usage=bool(body.stream_options and body.stream_options.include_usage))
    # The asker's language, the tenant's by default, as for /ask and the chat page (0050).
    with translation.override(asker_language(request=request, tenant=principal.tenant)):
        try:
            if body.stream:
                # Retrieval runs here, before the response starts: a rejected question is a 400, not a broken stream.
                return EventStreamResponse(in_active_language(completion.chunks(answer_stream(**arguments))))
            result = answer(**arguments)
        except QuestionRejected as exc:
            raise InvalidRequest(str(exc)) from exc
    completion.record(result)
    return JsonResponse({
        "id": completion.completion_id, "object": "chat.completion", "created": completion.created,
        "model": body.model, "system_fingerprint": None,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": _completion_text(result),
                                             "refusal": None},
                     "finish_reason": "stop", "logprobs": None}],
        "usage": usage(tenant=principal.tenant, result=result),
        "answerdesk": extension(result, tenant_slug=principal.tenant.slug),
    })


@dataclass(frozen=True)
class _Completion:
    """One answer in OpenAI's shapes: the trace note, and the `chat.completion.chunk` events of a stream."""

    principal: KeyPrincipal
    body: ChatIn
    conversation: Conversation
    completion_id: str
    created: int
    include_usage: bool

    def record(self, result: AnswerResult) -> None:
        openai_request_record(tenant=self.principal.tenant, trace_id=result.trace_id, model=self.body.model,
                              system=self.conversation.system, temperature=self.body.temperature,
                              max_tokens=self.body.max_tokens or self.body.max_completion_tokens)

    def chunks(self, events: Iterator[Event]) -> Iterator[bytes]:
        try:
            for event in events:
                yield from self.event_chunks(event)
        except Exception:
            # Headers are gone; an error event makes the SDK raise instead of showing half an answer as whole.
            log.exception("chat completion stream failed for tenant %s", self.principal.tenant.slug)
            yield sse({"error": {"message": "the answer failed midway; please retry", "type": "server_error",
                                 "param": None, "code": "internal_error"}})
            return
        yield sse("[DONE]")

    def event_chunks(self, event: Event) -> Iterator[bytes]:
        """One pipeline event as OpenAI's chunks. What retrieval found goes out before any text, on
        the role chunk; the final chunk carries the sources the answer actually cites."""
        match event:
            case Sources(sources=sources):
                yield self._chunk({"role": "assistant", "content": ""}, answerdesk={"candidate_sources": sources})
            case Delta(text=text):
                yield self._chunk({"content": text})
            case Done(result=result):
                footer = sources_footer(result)
                if footer:
                    yield self._chunk({"content": footer})
                self.record(result)
                slug = self.principal.tenant.slug
                yield self._chunk({}, "stop", answerdesk=extension(result, tenant_slug=slug))
                if self.include_usage:
                    yield sse({**self._head(), "choices": [], "usage": usage(tenant=self.principal.tenant,
                                                                              result=result)})
            case _:
                assert_never(event)

    def _head(self) -> dict[str, Any]:
        return {"id": self.completion_id, "object": "chat.completion.chunk", "created": self.created,
                "model": self.body.model, "system_fingerprint": None}

    def _chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return sse({**self._head(), "choices": [choice], **({"usage": None} if self.include_usage else {}), **extra})


@router.get("/models", response={200: ModelListOut, **ERRORS}, summary="The models this key can use")
def models(request: HttpRequest) -> Any:
    principal = request_principal(request)
    return JsonResponse({"object": "list", "data": [_model(principal, name) for name in MODELS]})


@router.get("/models/{model_id}", response={200: ModelOut, **ERRORS}, summary="One model")
def model_detail(request: HttpRequest, model_id: str = PathParam(..., example="answerdesk-extractive")) -> Any:
    principal = request_principal(request)
    model_uses_chain(model_id)
    return JsonResponse(_model(principal, model_id))


def _model(principal: KeyPrincipal, name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": int(principal.tenant.created_at.timestamp()),
            "owned_by": f"answerdesk:{principal.tenant.slug}"}
