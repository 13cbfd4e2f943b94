"""answer(): the one use case behind the API, the chat page, `manage.py ask` and the evaluation.

A question goes through this file top to bottom:

  answer(), answer_stream()  the two ways to ask; both are prepare() and then complete()
  prepare()   greeting? → spend cap → rewrite (turn > 1) → cache lookup → retrieve → gate;
              Finished (a greeting, a cache hit, an escalation on weak retrieval) or Prepared
  complete()  generate (provider chain | extractive) → citations (keep cited, check by
              similarity) → trace, and the cache entry
  TraceBuilder  what the stored trace says, filled in stage by stage; it writes the trace
              (cached, escalate, answered). Every abstention goes through records.abstain,
              which writes the escalation.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, NamedTuple, Required, TypedDict, Unpack

import numpy as np
from django.utils.translation import gettext

from answering.pipeline import records
from answering.pipeline.citations import CitedAnswer, check_claims_by_similarity, context_sources, finalize
from answering.pipeline.config import Configuration, configuration
from answering.pipeline.drafts import Draft
from answering.pipeline.extractive import extract_answer
from answering.pipeline.gate import GateDecision, confidence_gate
from answering.pipeline.greetings import greeting_reply
from answering.pipeline.limits import MAX_CONVERSATION_ID_CHARS, checked_question, history_turns
from answering.pipeline.llm import generate_with_model
from answering.pipeline.rewriting import Rewrite, rewrite_query
from answering.providers import spend
from answering.providers.chain import AllProvidersFailed, ProviderChain
from cachelayer import service as cache
from corpus.encoders.embedding import Encoder, encoder_for, encoder_reads
from corpus.encoders.passes import remembered_passes
from retrieval.pull import LackingPull, lacking_word_pull
from retrieval.search import Candidate, SearchResult, search
from tenants.models import Tenant
from tenants.readers import reader_scope
from tenants.scope import TenantScope


@dataclass
class AnswerResult:
    text: str
    action: str  # greeting | answered | escalated
    sources: list[dict[str, Any]] = field(default_factory=list)
    trace_id: int | None = None
    escalation_id: int | None = None
    follow_up_id: str = ""  # an escalation's opaque id: the asker's page is /t/<tenant>/f/<id>/
    generator: str = ""
    rewritten_query: str = ""
    conflict: bool = False
    cache_hit: bool = False
    claims: list[dict[str, Any]] = field(default_factory=list)
    retrieved: list[dict[str, Any]] = field(default_factory=list)
    stage_ms: dict[str, float] = field(default_factory=dict)


# -- what a stream carries: Sources once, before any text; Delta pieces; Done with the result --------
# Tuples underneath, so `kind, payload = event` reads any of them; `kind` is the event's name on the wire.

class Sources(NamedTuple):
    """What retrieval found; numbers are provisional (docs/decisions/0017)."""

    kind: Literal["sources"]
    sources: list[dict[str, Any]]


class Delta(NamedTuple):
    kind: Literal["token"]
    text: str


class Done(NamedTuple):
    kind: Literal["done"]
    result: AnswerResult


Event = Sources | Delta | Done


class Ask(TypedDict, total=False):
    """What answer() and answer_stream() take, all by keyword: prepare()'s parameters."""

    tenant: Required[Tenant]
    audiences: Required[Sequence[str]]
    question: Required[str]
    history: Sequence[dict[str, str]] | None
    conversation_id: str
    contact: str
    chain: ProviderChain | None
    use_default_chain: bool
    rerank: str | None
    mode: str | None  # one leg alone (retrieval.search.MODES): the evaluation's diagnostic arms
    config: Configuration | None  # what the surface built; None: as settings say now


def answer(**ask: Unpack[Ask]) -> AnswerResult:
    # The question is encoded for search, for the reranker, and again by the answerer: once
    # (corpus/encoders/passes.py, docs/decisions/0130).
    with remembered_passes():
        step = prepare(**ask)
        return step.result if isinstance(step, Finished) else complete(step)


def answer_stream(**ask: Unpack[Ask]) -> Iterator[Event]:
    """Sources first, then the text, then the result with its trace id.

    prepare() runs before this returns, so a rejected question raises here, before any event.
    The text is released only after the citation check: a token shown before we know it is
    grounded cannot be taken back (docs/decisions/0012-stream-after-citation-check.md)."""
    with remembered_passes():
        step = prepare(**ask)
    return _events(step)


def _events(step: Prepared | Finished) -> Iterator[Event]:
    yield Sources("sources", step.sources)
    # Its own block: a generator's steps may run in other contexts (an ASGI server's threads).
    with remembered_passes():
        result = step.result if isinstance(step, Finished) else complete(step)
    for piece in re.findall(r"\S+\s*", result.text):
        yield Delta("token", piece)
    yield Done("done", result)


def default_chain() -> ProviderChain | None:
    return ProviderChain.configured()


def generator_name(chain: ProviderChain | None) -> str:
    """What the cache files an answer under: the same question answered by another generator is another entry."""
    if not chain:
        return "extractive"
    return "llm:" + ",".join(f"{p.name}/{p.model}" for p in chain.providers)


# -- stage one: everything before generation ------------------------------------------------------

@dataclass(frozen=True)
class Finished:
    """prepare() already has the answer: a greeting, a cache hit, or an escalation on weak retrieval."""

    result: AnswerResult
    sources: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Prepared:
    """Retrieval passed the gate: what complete() generates from, checks against and records."""

    trace: TraceBuilder
    scope: TenantScope
    query: str  # the rewritten query: what was searched, and what the generator answers
    query_vector: np.ndarray
    encoder: Encoder  # the tenant's (encoder_for its language), which embedded query_vector
    candidates: list[Candidate]  # best first
    context: list[Candidate]  # the ones the generator reads
    sources: list[dict[str, Any]]  # the context, one entry per document, shown before any text
    chain: ProviderChain | None
    generator: str
    config: Configuration
    # The question without the missing word whose pull let it past the gate (0067), for the
    # extractive answerer; None when coverage passed on its own.
    emphasis: str | None = None
    # The query with its typos corrected (SearchResult.corrected_query): what the extractive
    # answerer scores sentences against. A model reads the question as asked.
    corrected: str = ""
    # A follow-up joined to the turn before for the search: the follow-up as asked, which the
    # extractive answerer addresses, and the conversation's earlier answers, which it never
    # repeats (0100).
    focus: str | None = None
    said: tuple[str, ...] = ()


def prepare(*, tenant: Tenant, audiences: Sequence[str], question: str,
            history: Sequence[dict[str, str]] | None = None, conversation_id: str = "", contact: str = "",
            chain: ProviderChain | None = None, use_default_chain: bool = True,
            rerank: str | None = None, mode: str | None = None,
            config: Configuration | None = None) -> Prepared | Finished:
    """QuestionRejected for a question the pipeline does not take (answering/pipeline/limits.py).
    `contact` (a checked email, or '') goes on the escalation if the question escalates. `config`:
    the surface's (answering.pipeline.config); a direct caller that passes none gets settings'."""
    config = config or configuration()
    question = checked_question(question)
    turns = history_turns(history, config.answer.history_turns)
    reply = greeting_reply(question)
    if reply is not None:
        return Finished(AnswerResult(text=reply, action="greeting", generator="greeting"))
    # Past the tenant's daily spend cap every chain, chosen or default, gives way to the extractive answerer.
    # Every call of this question (rewrite, relevance, generation) is billed to the tenant through `meter`.
    meter = spend.TenantMeter(tenant=tenant)
    chain = spend.chain_within_cap(tenant=tenant, chain=chain if chain is not None else (
        default_chain() if use_default_chain else None), meter=meter)
    trace = TraceBuilder(tenant=tenant, meter=meter, question=question, turns=turns, audiences=list(audiences),
                         conversation_id=conversation_id, abstain_text=config.answer.abstain_text, contact=contact)
    rewrite = rewrite_query(question, turns, chain, language=tenant.language)
    trace.rewritten(rewrite)
    scope = reader_scope(tenant=tenant, audiences=list(audiences))
    encoder = encoder_for(tenant.language)
    query_vector = encoder.encode_query(rewrite.query)
    generator = generator_name(chain)
    if config.answer.use_cache:
        hit = cache.lookup(tenant_id=tenant.id, audience_ids=scope.audience_ids, query=rewrite.query,
                           query_vector=query_vector, generator=generator, config=config.cache, encoder=encoder)
        trace.lap("cache")
        if hit is not None:
            return Finished(trace.cached(hit), sources=hit.sources)
    retrieved = _retrieve(scope=scope, tenant=tenant, query=rewrite.query, query_vector=query_vector,
                          rerank=rerank, mode=mode, config=config, meter=meter)
    found, gate, pull = retrieved.found, retrieved.gate, retrieved.pull
    trace.lap("retrieve")
    trace.searched(found, gate, pull)
    if not gate.passed:
        return Finished(trace.escalate("weak_retrieval", gate.reason))
    context = found.candidates[: config.retrieval.context_chunks]
    return Prepared(trace=trace, scope=scope, query=rewrite.query, query_vector=query_vector, encoder=encoder,
                    candidates=found.candidates, context=context, sources=context_sources(context), chain=chain,
                    generator=generator, config=config, corrected=found.corrected_query,
                    focus=question if rewrite.query != question else None,
                    said=tuple(t["content"] for t in turns if t["role"] == "assistant"),
                    emphasis=pull.without if pull is not None and gate.rescue == "pull" else None)


@dataclass(frozen=True)
class _Retrieved:
    found: SearchResult
    gate: GateDecision
    pull: LackingPull | None


def _retrieve(*, scope: TenantScope, tenant: Tenant, query: str, query_vector: np.ndarray | None,
              rerank: str | None, mode: str | None, config: Configuration,
              meter: spend.TenantMeter) -> _Retrieved:
    """One search and the gate's verdict on it."""
    with spend.metering(meter):  # the `llm` reranker's scorer has no chain of ours: it borrows the meter
        found = search(scope=scope, query=query, ts_config=tenant.text_search_config, rerank=rerank,
                       mode=mode, query_vector=query_vector, language=tenant.language, config=config.retrieval)
    pull = _lacking_pull(scope, found, tenant, config)
    gate = confidence_gate(found.candidates, found.query_coverage, unknown_names=found.unknown_names,
                           vector_evidence=encoder_reads(tenant.language), lacking_pull=pull.pull if pull else None,
                           config=config.gate)
    return _Retrieved(found, gate, pull)


def _lacking_pull(scope: TenantScope, found: SearchResult, tenant: Tenant,
                  config: Configuration) -> LackingPull | None:
    """Only for a question the coverage rule would escalate, in a language the encoder reads:
    an encode more, ~10 ms (docs/decisions/0067)."""
    if (found.unknown_names or not encoder_reads(tenant.language) or not found.candidates
            or found.query_coverage >= config.gate.min_query_coverage):
        return None
    return lacking_word_pull(scope, found, ts_config=tenant.text_search_config,
                             context_chunks=config.retrieval.context_chunks, encoder=encoder_for(tenant.language))


# -- stage two: generation, citations, the trace ----------------------------------------------------

@dataclass(frozen=True)
class Abstention:
    """Generation gave nothing to answer with: the escalation's reason, and the draft if there was one."""

    reason: str
    detail: str
    draft: Draft | None = None


def complete(prepared: Prepared) -> AnswerResult:
    trace = prepared.trace
    generated = _generate(prepared)
    trace.lap("generate")
    if isinstance(generated, Abstention):
        return trace.escalate(generated.reason, generated.detail, generated.draft)
    draft, generator = generated
    if draft.declined:
        return trace.escalate("model_declined", draft.decline_reason, draft)
    cited = finalize(draft, prepared.context)
    if not cited.sources:
        return trace.escalate("model_declined", "the answer cited nothing from the context", draft)
    cited.claims = check_claims_by_similarity(cited, prepared.context, scope=prepared.scope,
                                              min_similarity=prepared.config.answer.citation_min_similarity)
    trace.lap("citations")
    trace_id = trace.answered(draft, cited)
    if prepared.config.answer.use_cache:
        _cache_store(prepared, generator=generator, draft=draft, cited=cited, trace_id=trace_id)
    return AnswerResult(
        text=cited.text, action="answered", sources=[s.as_dict() for s in cited.sources], trace_id=trace_id,
        generator=draft.generator, rewritten_query=prepared.query, conflict=draft.conflict,
        claims=[c.__dict__ for c in cited.claims], retrieved=trace.retrieved, stage_ms=trace.stage_ms,
    )


def _generate(prepared: Prepared) -> tuple[Draft, str] | Abstention:
    """The draft, and the generator name its cache entry is filed under."""
    context_chunks = prepared.config.retrieval.context_chunks
    try:
        if prepared.chain:
            try:
                return generate_with_model(prepared.query, prepared.candidates, prepared.chain,
                                           context_chunks=context_chunks,
                                           max_tokens=prepared.config.answer.max_tokens), prepared.generator
            except spend.SpendCapReached:  # this question's own earlier calls reached the cap
                pass
        return (extract_answer(prepared.corrected or prepared.query, prepared.candidates, emphasis=prepared.emphasis,
                               context_chunks=context_chunks, focus=prepared.focus, said=prepared.said),
                generator_name(None))
    except AllProvidersFailed as exc:
        return Abstention("providers_failed", str(exc), Draft.declined_by("llm", str(exc), attempts=exc.attempts))
    except ValueError as exc:  # the model's output failed the schema
        return Abstention("providers_failed", f"unusable model output: {exc}")


def _cache_store(prepared: Prepared, *, generator: str, draft: Draft, cited: CitedAnswer, trace_id: int) -> None:
    tenant, context = prepared.trace.tenant, prepared.context
    stored = cache.store(tenant_id=tenant.id, audience_ids=prepared.scope.audience_ids, query=prepared.query,
                         query_vector=prepared.query_vector, generator=generator, answer=cited.text,
                         sources=[s.as_dict() for s in cited.sources], conflict=draft.conflict,
                         provider=draft.provider, model=draft.model, trace_id=trace_id, cost_usd=draft.cost_usd,
                         chunk_ids=[c.chunk_id for c in context],
                         contested_ids=[c.chunk_id for c in context if c.contested], config=prepared.config.cache,
                         encoder=prepared.encoder)
    if stored.skipped:  # said on the trace: why a repeat of this question will not be a hit
        records.trace_note(tenant=tenant, trace_id=trace_id, note={"cache_store": stored.as_dict()})


# -- the trace -----------------------------------------------------------------------------------

@dataclass
class TraceBuilder:
    """What the stored trace will say, filled in by the stages in order; one of cached(),
    escalate() or answered() writes it, with every provider call's usage from `meter`."""

    tenant: Tenant
    meter: spend.TenantMeter
    question: str
    turns: list[dict[str, str]]
    audiences: list[str]
    conversation_id: str
    abstain_text: str  # AnswerConfig.abstain_text
    contact: str = ""
    stage_ms: dict[str, float] = field(default_factory=dict)
    rewrite: Rewrite | None = None
    retrieval: dict[str, Any] = field(default_factory=dict)  # the gate's decision and what retrieval did
    retrieved: list[dict[str, Any]] = field(default_factory=list)  # the candidates, as the eval and agents read them
    _clock: float = field(default_factory=time.perf_counter)

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.stage_ms[stage] = round((now - self._clock) * 1000, 2)
        self._clock = now

    def rewritten(self, rewrite: Rewrite) -> None:
        self.lap("rewrite")
        self.rewrite = rewrite

    def searched(self, found: SearchResult, gate: GateDecision, pull: LackingPull | None = None) -> None:
        retrieval = found.as_trace()
        if pull is not None:
            retrieval["lacking_pull"] = asdict(pull)
        self.retrieval = {"gate": gate.as_dict(), "retrieval": retrieval}
        self.retrieved = [c.as_trace() for c in found.candidates]

    @property
    def query(self) -> str:
        return self.rewrite.query if self.rewrite else self.question

    def _request(self) -> dict[str, Any]:
        rewritten = self.rewrite is not None and self.rewrite.method != "none"
        return {"conversation_id": self.conversation_id[:MAX_CONVERSATION_ID_CHARS], "audiences": self.audiences,
                "question": self.question, "rewritten_query": self.query if rewritten else "",
                "history_turns": len(self.turns)}

    def _rewrite_details(self) -> dict[str, Any]:
        rewrite = self.rewrite or Rewrite(self.question, "none")
        return {"rewrite": {"method": rewrite.method, "reason": rewrite.reason}}

    def cached(self, hit: cache.CacheHit) -> AnswerResult:
        """A hit costs no generation and says so; what the rewrite cost before the lookup is still on it."""
        trace = records.trace_create(tenant=self.tenant, fields=self.meter.stamp({
            "action": "answered", **self._request(), "answer": hit.answer, "generator": hit.generator,
            "provider": hit.provider, "model": hit.model, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
            "cache_hit": True, "citations": hit.sources, "stage_ms": self.stage_ms,
            "details": {"cache": {"kind": hit.kind, "entry_id": hit.entry_id, "similarity": round(hit.similarity, 4),
                                  "original_trace_id": hit.original_trace_id,
                                  "cost_saved_usd": hit.original_cost_usd}},
        }))
        return AnswerResult(text=hit.answer, action="answered", sources=hit.sources, trace_id=trace.pk,
                            generator=hit.generator, rewritten_query=self.query, conflict=hit.conflict,
                            cache_hit=True)

    def escalate(self, reason: str, detail: str, draft: Draft | None = None) -> AnswerResult:
        fields = {**self._request(), **self.retrieval, "details": self._rewrite_details()}
        if draft is not None:
            fields.update(_usage(draft))
            fields["details"]["attempts"] = draft.attempts
        fields["stage_ms"] = self.stage_ms
        self.meter.stamp(fields)
        trace, escalation = records.abstain(tenant=self.tenant, reason=reason, detail=detail, question=self.question,
                                            history=self.turns, candidates=self.retrieved, trace_fields=fields,
                                            contact_email=self.contact)
        # The configured text, in the asker's language when the catalogue has it (the default does).
        return AnswerResult(text=gettext(self.abstain_text), action="escalated", trace_id=trace.pk,
                            escalation_id=escalation.pk, follow_up_id=escalation.public_id,
                            generator=trace.generator, rewritten_query=self.query, retrieved=self.retrieved,
                            stage_ms=self.stage_ms)

    def answered(self, draft: Draft, cited: CitedAnswer) -> int:
        citations = [{**s.as_dict(), "claims": [c.__dict__ for c in cited.claims if s.chunk_id in c.cited_chunk_ids]}
                     for s in cited.sources]
        details = {**self._rewrite_details(), "flags": cited.flags, "conflict": draft.conflict,
                   "attempts": draft.attempts, "weak_claims": [c.claim for c in cited.claims if c.weak]}
        fields = {"action": "answered", **self._request(), **self.retrieval, **_usage(draft), "answer": cited.text,
                  "stage_ms": self.stage_ms, "citations": citations, "details": details}
        return records.trace_create(tenant=self.tenant, fields=self.meter.stamp(fields)).pk


def _usage(draft: Draft) -> dict[str, Any]:
    """Who generated, and what it cost; meter.stamp then puts the whole question's usage over the counts."""
    return {"generator": draft.generator, "provider": draft.provider, "model": draft.model,
            "input_tokens": draft.input_tokens, "output_tokens": draft.output_tokens, "cost_usd": draft.cost_usd}
