"""Chat Completions messages in, Answerdesk answers out (docs/decisions/0015-openai-compatible-endpoint.md).

The last user message is the question, earlier user and assistant turns are the history, a
client's system (or developer) message is written to the trace and goes no further: the
answer policy is ours. Assistant turns come back from clients with our own "Sources" list
appended; it is cut off again so the rewriter reads the conversation, not our footnotes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from answering.models import Trace
from answering.handoff.links import follow_up_object
from answering.pipeline.flow import AnswerResult
from answering.pipeline.limits import HISTORY_ROLES, MAX_HISTORY_TURNS, MAX_QUESTION_CHARS
from tenants.apierrors import InvalidRequest, NotFound, PayloadTooLarge
from tenants.models import Tenant
from tenants.rls import tenant_context

# Model name → whether the tenant's provider chain may answer (False: the extractive answerer).
MODELS: dict[str, bool] = {"answerdesk": True, "answerdesk-extractive": False}
SOURCES_HEADING = "Sources:"
_FOOTER = f"\n\n{SOURCES_HEADING}\n"
MAX_SYSTEM_CHARS_RECORDED = 4000


@dataclass
class Conversation:
    question: str
    history: list[dict[str, str]] = field(default_factory=list)
    system: list[str] = field(default_factory=list)
    conversation_id: str = ""


def model_uses_chain(name: str) -> bool:
    if name not in MODELS:
        raise NotFound(f"The model `{name}` does not exist or you do not have access to it.", code="model_not_found")
    return MODELS[name]


def message_text(content: Any) -> str:
    """A string, or the text parts of a content array (images and audio are not read)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(getattr(p, "text", None) or "") for p in content
                     if getattr(p, "type", "") == "text" and getattr(p, "text", None))


def strip_sources(text: str) -> str:
    head, _, _ = text.partition(_FOOTER)
    return head.strip()


def conversation_from(messages: Sequence[Any], *, user: str | None) -> Conversation:
    if not messages or messages[-1].role != "user":
        raise InvalidRequest("the last message must be the user's question", code="invalid_messages")
    question = message_text(messages[-1].content).strip()
    if not question:
        raise InvalidRequest("the last user message is empty", code="invalid_messages")
    if len(question) > MAX_QUESTION_CHARS:
        raise PayloadTooLarge(f"the question is {len(question)} characters; the limit is {MAX_QUESTION_CHARS}")
    history: list[dict[str, str]] = []
    system: list[str] = []
    for message in messages[:-1]:
        text = message_text(message.content)
        if message.role in ("system", "developer"):
            system.append(text)
        elif message.role in HISTORY_ROLES and text.strip():
            content = strip_sources(text) if message.role == "assistant" else text.strip()
            history.append({"role": message.role, "content": content})
    # Chat clients resend the whole conversation: the recent turns, instead of refusing long ones. The pipeline
    # cuts each to the question limit and reads the last few (answering/pipeline/limits.py).
    history = history[-MAX_HISTORY_TURNS:]
    first_user = next((m for m in messages if m.role == "user"), messages[-1])
    # No conversation id in this wire format: the first question (and the client's user tag)
    # identify a conversation well enough to group its traces; the endpoint binds it to the key,
    # so another key opening with the same words is another conversation (docs/decisions/0093).
    seed = json.dumps([message_text(first_user.content), user or ""])
    conversation_id = "oa-" + hashlib.sha256(seed.encode()).hexdigest()[:24]
    return Conversation(question=question, history=history, system=system, conversation_id=conversation_id)


def source_line(source: dict[str, Any]) -> str:
    where = source.get("heading_path") or ""
    page = f", p. {source['page']}" if source.get("page") else ""
    return f"[{source['number']}] {source['title']}" + (f" — {where}" if where else "") + page


def sources_footer(result: AnswerResult) -> str:
    if result.action != "answered" or not result.sources:
        return ""
    return _FOOTER + "\n".join(source_line(s) for s in result.sources)


def extension(result: AnswerResult, *, tenant_slug: str) -> dict[str, Any]:
    """The structured side of the citations, for clients that read it (`answerdesk` on the response),
    and on an abstention the asker's follow-up (opaque id and page URL)."""
    return {"action": result.action, "trace_id": result.trace_id, "escalation_id": result.escalation_id,
            "follow_up": follow_up_object(tenant_slug=tenant_slug, public_id=result.follow_up_id),
            "cache_hit": result.cache_hit, "conflict": result.conflict,
            "sources": [{**s, "locator": source_line(s)} for s in result.sources]}


def usage(*, tenant: Tenant, result: AnswerResult) -> dict[str, int]:
    """What the model was billed for this answer, from its trace: zero for greetings, cache hits
    and the extractive answerer, which call no model."""
    prompt = completion = 0
    if result.trace_id is not None and not result.cache_hit:
        with tenant_context(tenant.id):
            row = Trace.objects.filter(tenant=tenant, pk=result.trace_id).values_list(
                "input_tokens", "output_tokens").first()
        prompt, completion = row if row else (0, 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def openai_request_record(*, tenant: Tenant, trace_id: int | None, model: str, system: Sequence[str],
                          temperature: float | None, max_tokens: int | None) -> None:
    """Keep what the client asked for on the trace; none of it changes the answer."""
    if trace_id is None:
        return
    note = {"openai": {"model": model, "temperature": temperature, "max_tokens": max_tokens,
                       "client_system": "\n\n".join(system)[:MAX_SYSTEM_CHARS_RECORDED]}}
    with tenant_context(tenant.id) as cursor:
        cursor.execute(
            "UPDATE answering_trace SET details = details || %(note)s::jsonb WHERE tenant_id = %(t)s AND id = %(id)s",
            {"note": json.dumps(note), "t": tenant.id, "id": trace_id},
        )
