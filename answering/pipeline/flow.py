"""answer(): the one use case behind the API, the chat page and `manage.py ask`.

greeting? → rewrite (turn > 1) → retrieve → gate → generate (provider chain | extractive)
→ citations (keep cited, check by similarity) → trace. Every abstention goes through
records.abstain, which writes the escalation.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from answering.pipeline import records
from answering.providers import spend
from answering.pipeline.citations import check_claims_by_similarity, context_sources, finalize
from answering.pipeline.drafts import Draft
from answering.pipeline.extractive import extract_answer
from answering.pipeline.gate import confidence_gate
from answering.pipeline.greetings import greeting_reply
from answering.pipeline.llm import generate_with_model
from answering.providers.chain import AllProvidersFailed, ProviderChain
from answering.pipeline.rewriting import rewrite_query
from cachelayer import service as cache
from corpus.embedding import get_encoder
from retrieval.querytext import clean_query
from retrieval.search import search
from tenants.models import Tenant
from tenants.readers import reader_scope

MAX_QUESTION_CHARS = 4000


class QuestionRejected(ValueError):
    pass


@dataclass
class AnswerResult:
    text: str
    action: str  # greeting | answered | escalated
    sources: list[dict[str, Any]] = field(default_factory=list)
    trace_id: int | None = None
    escalation_id: int | None = None
    generator: str = ""
    rewritten_query: str = ""
    conflict: bool = False
    cache_hit: bool = False
    claims: list[dict[str, Any]] = field(default_factory=list)
    retrieved: list[dict[str, Any]] = field(default_factory=list)
    stage_ms: dict[str, float] = field(default_factory=dict)


def _clean_history(history: Sequence[dict[str, str]] | None) -> list[dict[str, str]]:
    turns = []
    for turn in history or []:
        role, content = str(turn.get("role", "")), str(turn.get("content", ""))
        if role not in ("user", "assistant"):
            raise QuestionRejected(f"history role {role!r} is not user or assistant")
        turns.append({"role": role, "content": clean_query(content)[:MAX_QUESTION_CHARS]})
    return turns[-settings.ANSWER_HISTORY_TURNS:]


def _generator_name(chain: ProviderChain | None) -> str:
    if not chain:
        return "extractive"
    return "llm:" + ",".join(f"{p.name}/{p.model}" for p in chain.providers)


def _serve_cached(tenant: Tenant, hit: cache.CacheHit, question: str, rewritten: str, method: str,
                  audiences: Sequence[str], turns: list[dict[str, str]], conversation_id: str,
                  stage_ms: dict[str, float], meter: spend.TenantMeter) -> AnswerResult:
    """A hit costs no generation and says so; what the rewrite cost before the lookup is still on it."""
    trace = records.trace_create(tenant=tenant, fields=meter.stamp({
        "action": "answered", "conversation_id": conversation_id[:64], "audiences": list(audiences),
        "question": question, "rewritten_query": rewritten if method != "none" else "",
        "history_turns": len(turns), "answer": hit.answer, "generator": hit.generator, "provider": hit.provider,
        "model": hit.model, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "cache_hit": True,
        "citations": hit.sources, "stage_ms": stage_ms,
        "details": {"cache": {"kind": hit.kind, "entry_id": hit.entry_id, "similarity": round(hit.similarity, 4),
                              "original_trace_id": hit.original_trace_id,
                              "cost_saved_usd": hit.original_cost_usd}},
    }))
    return AnswerResult(text=hit.answer, action="answered", sources=hit.sources, trace_id=trace.pk,
                        generator=hit.generator, rewritten_query=rewritten, conflict=hit.conflict, cache_hit=True)


def default_chain() -> ProviderChain | None:
    return ProviderChain.from_settings() if settings.ANSWER_PROVIDERS.strip() else None


# What the stream yields: ("sources", [source dicts]) once, before any text; ("token", str) pieces;
# ("done", AnswerResult). A plain call drains the same generator, so both paths are one pipeline.
Event = tuple[str, Any]


def answer(**kwargs: Any) -> AnswerResult:
    stages = _run(**kwargs)
    while True:
        try:
            next(stages)
        except StopIteration as stop:
            return stop.value


def answer_stream(**kwargs: Any) -> Iterator[Event]:
    """Sources first, then the text, then the result with its trace id.

    The text is released only after the citation check: a token shown before we know it is
    grounded cannot be taken back (docs/decisions/0012-stream-after-citation-check.md)."""
    stages = _run(**kwargs)
    sources_sent = False
    while True:
        try:
            kind, payload = next(stages)
        except StopIteration as stop:
            result: AnswerResult = stop.value
            break
        if kind == "sources":
            sources_sent = True
            yield kind, payload
    if not sources_sent:
        yield "sources", []
    for piece in re.findall(r"\S+\s*", result.text):
        yield "token", piece
    yield "done", result


def _run(
    *,
    tenant: Tenant,
    audiences: Sequence[str],
    question: str,
    history: Sequence[dict[str, str]] | None = None,
    conversation_id: str = "",
    chain: ProviderChain | None = None,
    use_default_chain: bool = True,
    rerank: str | None = None,
) -> Generator[Event, None, AnswerResult]:
    question = clean_query(question or "").strip()
    if not question:
        raise QuestionRejected("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionRejected(f"the question is {len(question)} characters; the limit is {MAX_QUESTION_CHARS}")
    turns = _clean_history(history)
    reply = greeting_reply(question)
    if reply is not None:
        return AnswerResult(text=reply, action="greeting", generator="greeting")

    # Past the tenant's daily spend cap every chain, chosen or default, gives way to the extractive answerer.
    # Every call of this question (rewrite, relevance, generation) is billed to the tenant through `meter`.
    meter = spend.TenantMeter(tenant=tenant)
    chain = spend.chain_within_cap(tenant=tenant, chain=chain if chain is not None else (
        default_chain() if use_default_chain else None), meter=meter)
    stage_ms: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        stage_ms[name] = round((now - clock) * 1000, 2)
        clock = now

    rewrite = rewrite_query(question, turns, chain)
    lap("rewrite")
    scope = reader_scope(tenant=tenant, audiences=list(audiences))
    query_vector = get_encoder().encode_one(rewrite.query)
    generator = _generator_name(chain)
    if settings.CACHE_ENABLED:
        hit = cache.lookup(tenant_id=tenant.id, audience_ids=scope.audience_ids, query=rewrite.query,
                           query_vector=query_vector, generator=generator)
        lap("cache")
        if hit is not None:
            yield "sources", hit.sources
            return _serve_cached(tenant, hit, question, rewrite.query, rewrite.method, audiences, turns,
                                 conversation_id, stage_ms, meter)
    with spend.metering(meter):  # the `llm` reranker's scorer has no chain of ours: it borrows the meter
        result = search(scope=scope, query=rewrite.query, ts_config=tenant.text_search_config, rerank=rerank,
                        query_vector=query_vector)
    lap("retrieve")
    gate = confidence_gate(result.candidates, result.query_coverage)
    trace_fields: dict[str, Any] = {
        "conversation_id": conversation_id[:64], "audiences": list(audiences), "question": question,
        "rewritten_query": rewrite.query if rewrite.method != "none" else "", "history_turns": len(turns),
        "gate": gate.as_dict(), "retrieval": result.as_trace(),
        "details": {"rewrite": {"method": rewrite.method, "reason": rewrite.reason}},
    }
    retrieved = [c.as_trace() for c in result.candidates]

    def escalate(reason: str, detail: str, draft: Draft | None = None) -> AnswerResult:
        if draft is not None:
            trace_fields.update(generator=draft.generator, provider=draft.provider, model=draft.model,
                                input_tokens=draft.input_tokens, output_tokens=draft.output_tokens,
                                cost_usd=draft.cost_usd)
            trace_fields["details"]["attempts"] = draft.attempts
        trace_fields["stage_ms"] = stage_ms
        meter.stamp(trace_fields)
        trace, escalation = records.abstain(tenant=tenant, reason=reason, detail=detail, question=question,
                                            history=turns, candidates=retrieved, trace_fields=trace_fields)
        return AnswerResult(text=settings.ANSWER_ABSTAIN_TEXT, action="escalated", trace_id=trace.pk,
                            escalation_id=escalation.pk, generator=trace.generator,
                            rewritten_query=rewrite.query, retrieved=retrieved, stage_ms=stage_ms)

    if not gate.passed:
        return escalate("weak_retrieval", gate.reason)
    yield "sources", context_sources(result.candidates[: settings.ANSWER_CONTEXT_CHUNKS])
    try:
        if chain:
            try:
                draft = generate_with_model(rewrite.query, result.candidates, chain)
            except spend.SpendCapReached:  # this question's own earlier calls reached the cap
                chain, generator = None, _generator_name(None)
                draft = extract_answer(rewrite.query, result.candidates)
        else:
            draft = extract_answer(rewrite.query, result.candidates)
    except AllProvidersFailed as exc:
        lap("generate")
        failed = Draft.declined_by("llm", str(exc), attempts=exc.attempts)
        return escalate("providers_failed", str(exc), failed)
    except ValueError as exc:  # the model's output failed the schema
        lap("generate")
        return escalate("providers_failed", f"unusable model output: {exc}")
    lap("generate")
    if draft.declined:
        return escalate("model_declined", draft.decline_reason, draft)
    context = result.candidates[: settings.ANSWER_CONTEXT_CHUNKS]
    cited = finalize(draft, context)
    if not cited.sources:
        return escalate("model_declined", "the answer cited nothing from the context", draft)
    cited.claims = check_claims_by_similarity(cited, context)
    lap("citations")
    trace_fields.update(
        generator=draft.generator, provider=draft.provider, model=draft.model, input_tokens=draft.input_tokens,
        output_tokens=draft.output_tokens, cost_usd=draft.cost_usd, answer=cited.text, stage_ms=stage_ms,
        citations=[{**s.as_dict(), "claims": [c.__dict__ for c in cited.claims if s.chunk_id in c.cited_chunk_ids]}
                   for s in cited.sources],
    )
    trace_fields["details"].update(flags=cited.flags, conflict=draft.conflict, attempts=draft.attempts,
                                   weak_claims=[c.claim for c in cited.claims if c.weak])
    meter.stamp(trace_fields)
    trace = records.trace_create(tenant=tenant, fields={"action": "answered", **trace_fields})
    if settings.CACHE_ENABLED:
        stored = cache.store(tenant_id=tenant.id, audience_ids=scope.audience_ids, query=rewrite.query,
                             query_vector=query_vector, generator=generator, answer=cited.text,
                             sources=[s.as_dict() for s in cited.sources], conflict=draft.conflict,
                             provider=draft.provider, model=draft.model, trace_id=trace.pk, cost_usd=draft.cost_usd,
                             chunk_ids=[c.chunk_id for c in context],
                             contested_ids=[c.chunk_id for c in context if c.contested])
        if stored.skipped:  # said on the trace: why a repeat of this question will not be a hit
            records.trace_note(tenant=tenant, trace_id=trace.pk, note={"cache_store": stored.as_dict()})
    return AnswerResult(
        text=cited.text, action="answered", sources=[s.as_dict() for s in cited.sources], trace_id=trace.pk,
        generator=draft.generator, rewritten_query=rewrite.query, conflict=draft.conflict,
        claims=[c.__dict__ for c in cited.claims], retrieved=retrieved, stage_ms=stage_ms,
    )
