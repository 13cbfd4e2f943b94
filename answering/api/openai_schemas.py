"""What the OpenAI-compatible endpoints answer, for their OpenAPI document.

The views return their JSON directly (the shapes are OpenAI's, built in openai_api.py), so
these schemas document rather than serialise; schemathesis checks every response against
them (config/tests/test_schemathesis.py, docs/decisions/0026).
"""

from __future__ import annotations

from typing import Any, Literal

from ninja import Field, Schema


class OpenAIErrorDetail(Schema):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class OpenAIErrorOut(Schema):
    error: OpenAIErrorDetail


# Every status config/api.py's openai_error can answer with, so the document lists what clients meet.
ERRORS: dict[int, type[Schema]] = {code: OpenAIErrorOut for code in (400, 401, 404, 413, 415, 429)}


class ModelOut(Schema):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str


class ModelListOut(Schema):
    object: Literal["list"]
    data: list[ModelOut]


class AssistantMessage(Schema):
    role: Literal["assistant"]
    content: str | None
    refusal: str | None = None


class Choice(Schema):
    index: int
    message: AssistantMessage
    finish_reason: Literal["stop"]
    logprobs: None = None


class Usage(Schema):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class FollowUp(Schema):
    id: str
    url: str


class AnswerdeskExtension(Schema):
    action: Literal["greeting", "answered", "escalated"]
    trace_id: int | None
    escalation_id: int | None
    follow_up: FollowUp | None = Field(None, description="On an abstention: the asker's follow-up page (opaque id "
                                                          "and URL), where the agents' replies appear.")
    cache_hit: bool
    conflict: bool
    sources: list[dict[str, Any]]


class ChatCompletionOut(Schema):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    system_fingerprint: str | None = None
    choices: list[Choice]
    usage: Usage
    answerdesk: AnswerdeskExtension


# OpenAPI 3.1 reads an event stream's schema as the schema of each event; `[DONE]` is not JSON.
_CHUNK_EVENT = {"type": "object", "required": ["data"], "properties": {"data": {"type": "string"}},
                "description": "`data:` lines holding chat.completion.chunk objects, then `data: [DONE]`"}
# Both media types spelled out: an operation's openapi_extra replaces ninja's `content` whole.
STREAMED = {"responses": {"200": {
    "description": "A chat.completion, or chat.completion.chunk events when `stream` is true",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ChatCompletionOut"}},
                "text/event-stream": {"schema": _CHUNK_EVENT}},
}}}
