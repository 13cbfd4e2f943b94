"""Run a golden set against a tenant, arm by arm, through the full answer pipeline.

Locators are resolved to chunk ids at the start of every run; a locator that resolves to
nothing is an error of the set, reported, never a miss. Retrieval metrics read the ranked
candidates the pipeline retrieved; answer metrics read what it said.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from answering.models import Trace
from answering.pipeline.config import Configuration, configuration
from answering.pipeline.greetings import match_greeting
from answering.pipeline.flow import answer
from answering.pipeline.flow import default_chain
from corpus.encoders.embedding import identity_for
from corpus.ingest.store import refuse_mixed_encoder
from evaluation.arms import ARMS, skip_reason
from evaluation.golden import Case, GoldenSet
from evaluation.intervals import report_intervals
from evaluation.machine import machine_facts
from evaluation.judge import Judge, judge_case, judge_from_settings, judge_metrics
from evaluation.locators import ChunkInfo, matches, resolve, tenant_chunks
from evaluation.metrics import first_hit_rank, mean, ndcg_at, percentile, precision_recall, recall_at, reciprocal_rank
from evaluation.multiquery import multi_query_retrieve
from evaluation.proxies import case_proxies, proxy_metrics
from evaluation.shadow import shadow_build
from retrieval.search import search
from tenants.models import Tenant
from tenants.readers import reader_scope
from tenants.rls import tenant_context

RETRIEVAL_TYPES = ("normal", "multi_turn", "stale", "conflict")


@dataclass
class ArmReport:
    arm: str
    metrics: dict[str, float | int | None] = field(default_factory=dict)
    cases: list[dict[str, Any]] = field(default_factory=list)
    hard_failures: list[str] = field(default_factory=list)
    judge_note: str = ""
    encoder: str = ""  # the identity that encoded the questions and, checked, the index's vectors


def _contains(text: str, needle: str) -> bool:
    return needle.casefold() in text.casefold()


def _probe(case: Case, golden: GoldenSet, tenant: Tenant, chunks: dict[int, ChunkInfo],
           mode: str | None = None, config: Configuration | None = None) -> dict[str, Any]:
    """Tenant and audience probes: the source must not be retrieved (zero tolerance)."""
    asker = Tenant.objects.get(slug=case.tenant) if case.tenant else tenant
    audiences = [case.audience or golden.audience]
    result = search(scope=reader_scope(tenant=asker, audiences=audiences), query=case.question,
                    ts_config=asker.text_search_config, k=10, mode=mode, language=asker.language,
                    config=(config or configuration()).retrieval)
    forbidden = {(l.source, l.document_slug) for l in case.expected}
    leaked = [f"{c.source_type}:{c.slug}" for c in result.candidates
              if asker.pk == tenant.pk and (c.source_type, c.slug) in forbidden]
    if asker.pk != tenant.pk:
        # Any chunk id of the golden tenant coming back to another tenant is a leak.
        leaked = [f"{c.source_type}:{c.slug}" for c in result.candidates if c.chunk_id in chunks]
    return {"id": case.id, "type": case.type, "leaked": leaked, "passed": not leaked}


@dataclass
class _Run:
    """What every case of one arm's run reads: the set's resolved chunks and the arm's chain."""

    golden: GoldenSet
    tenant: Tenant
    chunks: dict[int, ChunkInfo]
    relevant: dict[str, set[int]]
    archived_docs: set[tuple[str, str]]
    judge: Judge | None
    chain: Any = None
    mode: str | None = None  # the arm's one leg, or None: the product's search
    config: Configuration | None = None  # the arm's: the settings' with its overrides, the cache off
    latencies: list[float] = field(default_factory=list)
    stages: dict[str, list[float]] = field(default_factory=dict)


def run_arm(*, golden: GoldenSet, tenant: Tenant, arm: str, ks: Sequence[int] = (1, 3, 5, 10),
            progress: bool = False, chunks: dict[int, ChunkInfo] | None = None,
            judge: Judge | None = None) -> tuple[ArmReport, list[str]]:
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; known: {', '.join(ARMS)}")
    spec = ARMS[arm]
    chain = default_chain() if spec.retrieval == "multi_query" else None
    if spec.retrieval == "multi_query" and chain is None:
        raise ValueError(f"arm {arm} needs a model provider to rephrase with, and none is configured")
    chunks = chunks if chunks is not None else tenant_chunks(tenant)
    relevant, errors = resolve(golden, chunks)
    run = _Run(golden=golden, tenant=tenant, chunks=chunks, relevant=relevant, judge=judge, chain=chain,
               mode=spec.mode or None, archived_docs={(i.source_type, i.slug) for i in chunks.values() if i.archived})
    report = ArmReport(arm=arm)
    run.config = configuration().with_overrides({"answer.use_cache": False, **spec.overrides})
    # Questions encoded by one runtime against vectors of another rank by neither (0060): a run
    # that would compare them is refused, naming both, before a case runs.
    report.encoder = identity_for(tenant.language)
    refuse_mixed_encoder(tenant=tenant, encoder=report.encoder)
    for case in tqdm(golden.cases, desc=f"{golden.tenant}/{arm}", disable=not progress, unit="case"):
        row, failures = _run_case(run, case)
        report.cases.append(row)
        report.hard_failures.extend(failures)
    report.metrics = summarise(report.cases, ks, run.latencies, run.stages)
    judged, report.judge_note = judge_metrics(report.cases, configured=judge is not None)
    report.metrics.update(judged)
    return report, errors


def _run_case(run: _Run, case: Case) -> tuple[dict[str, Any], list[str]]:
    """One case's outcome row and the hard assertions it broke."""
    if case.type == "greeting":
        return {"id": case.id, "type": case.type, "passed": match_greeting(case.question) is not None}, []
    if case.type in ("tenant_probe", "audience_probe"):
        outcome = _probe(case, run.golden, run.tenant, run.chunks, run.mode, run.config)
        return outcome, [] if outcome["passed"] else [f"{case.id}: {case.type} retrieved {outcome['leaked']}"]
    if run.chain is not None:
        started = time.perf_counter()
        retrieved = multi_query_retrieve(tenant=run.tenant, audience=run.golden.audience, question=case.question,
                                         history=case.history, chain=run.chain, config=run.config)
        run.latencies.append((time.perf_counter() - started) * 1000)
        return _retrieval_row(case, retrieved, run.relevant, run.chunks), []
    previous = _previous_answer(run, case) if case.history else ""
    history = _as_it_happened(case.history, previous)
    started = time.perf_counter()
    result = answer(tenant=run.tenant, audiences=[run.golden.audience], question=case.question,
                    history=history, conversation_id=f"eval-{case.id}", use_default_chain=True,
                    mode=run.mode, config=run.config)
    run.latencies.append((time.perf_counter() - started) * 1000)
    for stage, ms in result.stage_ms.items():
        run.stages.setdefault(stage, []).append(ms)
    row = _answer_row(run, case, result)
    if case.history and row["action"] == "answered":
        row.update(_follow_up_proxies(case, row, previous))
    return row, _hard_failures(case, row, result.action)


def _previous_answer(run: _Run, case: Case) -> str:
    """The product's own answer to the case's last user turn (asked with the history before it),
    or "" when it did not answer."""
    users = [i for i, turn in enumerate(case.history) if turn["role"] == "user"]
    if not users:
        return ""
    last = users[-1]
    earlier = answer(tenant=run.tenant, audiences=[run.golden.audience], question=case.history[last]["content"],
                     history=list(case.history[:last]), conversation_id=f"eval-{case.id}-previous",
                     use_default_chain=True, mode=run.mode, config=run.config)
    return earlier.text if earlier.action == "answered" else ""


def _as_it_happened(history: Sequence[dict[str, str]], previous: str) -> list[dict[str, str]]:
    """The conversation as a person had it: the set's last assistant turn (a short summary the
    set's author wrote) replaced by what the product answered to the turn before it, when it
    answered; the follow-up must not repeat what the person was actually shown (0100)."""
    turns = [dict(turn) for turn in history]
    if previous and turns and turns[-1]["role"] == "assistant":
        turns[-1]["content"] = previous
    return turns


def _answer_row(run: _Run, case: Case, result: Any) -> dict[str, Any]:
    row = _retrieval_row(case, result.retrieved, run.relevant, run.chunks)
    answered = result.action == "answered"
    text = result.text if answered else ""
    cited_docs = {(s["source_type"], s["slug"]) for s in result.sources}
    expected_docs = {(l.source, l.document_slug) for l in case.expected}
    row.update({
        # What a reader is shown, kept so a rater's sheet can be built from a stored report.
        "question": case.question, "history": list(case.history), "answer": result.text,
        "sources": [_shown_source(s) for s in result.sources],
        "action": result.action,
        "fact_coverage": (mean([1.0 if _contains(text, f) else 0.0 for f in case.must_contain])
                          if case.must_contain else None),
        "forbidden": [f for f in case.must_not_contain if _contains(text, f)],
        "citation_correct": bool(cited_docs & expected_docs) if answered and case.expected else None,
        "stale_cited": sorted(f"{t}:{s}" for t, s in cited_docs & run.archived_docs),
        "trace_id": result.trace_id,
        "gate": gate_signals(tenant=run.tenant, trace_id=result.trace_id),
    })
    if answered:
        answerable = case.type in RETRIEVAL_TYPES and bool(case.expected)
        row.update(case_proxies(answer=result.text, sources=result.sources, answerable=answerable,
                                expected_pages=expected_docs, previous_answers=(), follow_up=False))
    if run.judge is not None and answered:
        row["judge"] = judge_case(judge=run.judge, tenant=run.tenant, question=case.question, answer=result.text,
                                  sources=result.sources)
    return row


def _shown_source(source: dict[str, Any]) -> dict[str, Any]:
    return {k: source.get(k) for k in ("number", "source_type", "slug", "title", "heading_path", "url")}


def _follow_up_proxies(case: Case, row: dict[str, Any], previous: str) -> dict[str, Any]:
    """Turn contamination of a follow-up, against both previous answers it could repeat: the one
    the set writes in the history, and the one the product gave to the previous question (the
    one the follow-up was asked after, kept as `previous_answer`)."""
    written = [t["content"] for t in case.history if t["role"] == "assistant"][-1:]
    proxies = case_proxies(answer=row["answer"], sources=row["sources"], answerable=False, expected_pages=(),
                           previous_answers=[*written, previous], follow_up=True)
    return {"previous_answer": previous, "turn_contamination": proxies["turn_contamination"],
            "repeated_sentences": proxies["repeated_sentences"]}


def gate_signals(*, tenant: Tenant, trace_id: int | None) -> dict[str, Any]:
    """What the gate decided and read for one case, from its trace: bench/gate_fit.py replays
    other gates on these (docs/decisions/0042)."""
    if trace_id is None:
        return {}
    with tenant_context(tenant.id):
        trace = Trace.objects.filter(tenant_id=tenant.id, pk=trace_id).values("gate", "retrieval").first()
    if trace is None:
        return {}
    retrieval = trace["retrieval"] or {}
    top = (retrieval.get("candidates") or [{}])[0]
    return {"passed": (trace["gate"] or {}).get("passed"), "reason": (trace["gate"] or {}).get("reason"),
            "query_coverage": retrieval.get("query_coverage"), "vector_margin": retrieval.get("vector_margin"),
            "top_rerank_probability": top.get("rerank_probability"), "candidates": len(retrieval.get("candidates") or []),
            "unknown_names": retrieval.get("unknown_names") or [],
            "lacking_pull": (retrieval.get("lacking_pull") or {}).get("pull")}


def _hard_failures(case: Case, row: dict[str, Any], action: str) -> list[str]:
    failures = []
    if case.type == "must_abstain" and action == "answered":
        failures.append(f"{case.id}: must-abstain case was answered")
    if row["forbidden"]:
        failures.append(f"{case.id}: answer contains forbidden text {row['forbidden']}")
    if row["stale_cited"]:
        failures.append(f"{case.id}: cited archived documents {row['stale_cited']}")
    if action == "greeting":
        failures.append(f"{case.id}: intercepted as a greeting")
    return failures


def _retrieval_row(case: Case, retrieved: list[dict[str, Any]], relevant: dict[str, set[int]],
                   chunks: dict[int, ChunkInfo]) -> dict[str, Any]:
    """A retrieval-only outcome: ranks and what came back, no action (answer metrics skip it)."""
    ranked = [c["chunk_id"] for c in retrieved]
    page_ids = {cid for cid, info in chunks.items() if any(matches(l, info, page_level=True) for l in case.expected)}
    return {
        "id": case.id, "type": case.type,
        "hit_rank": first_hit_rank(ranked, relevant.get(case.id, set())) if case.expected else None,
        "page_hit_rank": first_hit_rank(ranked, page_ids) if case.expected else None,
        "retrieved": [f"{c['source_type']}:{c['slug']}#{c['heading_path']}" for c in retrieved[:10]],
        "expected": [l.describe() for l in case.expected],
    }


def summarise(cases: list[dict[str, Any]], ks: Sequence[int], latencies: list[float],
              stages: dict[str, list[float]]) -> dict[str, float | int | None]:
    retrieval = [c for c in cases if c["type"] in RETRIEVAL_TYPES]
    ranks = [c["hit_rank"] for c in retrieval]
    page_ranks = [c["page_hit_rank"] for c in retrieval]
    metrics: dict[str, float | int | None] = {}
    for k in ks:
        metrics[f"recall@{k}"] = round(mean([recall_at(r, k) for r in ranks]), 4)
    for k in ks:
        metrics[f"page_recall@{k}"] = round(mean([recall_at(r, k) for r in page_ranks]), 4)
    metrics["mrr"] = round(mean([reciprocal_rank(r) for r in ranks]), 4)
    metrics["ndcg@10"] = round(mean([ndcg_at(r, 10) for r in ranks]), 4)
    # Page level beside heading level: an index whose chunks span sections (the naive arm) is
    # compared fairly only where the heading cannot flatter it.
    metrics["page_mrr"] = round(mean([reciprocal_rank(r) for r in page_ranks]), 4)
    asked = [c for c in cases if "action" in c]
    precision, recall = precision_recall([c["action"] == "escalated" for c in asked],
                                         [c["type"] == "must_abstain" for c in asked])
    metrics["abstention_precision"] = None if precision is None else round(precision, 4)
    metrics["abstention_recall"] = None if recall is None else round(recall, 4)
    coverage = [c["fact_coverage"] for c in asked if c["fact_coverage"] is not None]
    metrics["fact_coverage"] = round(mean(coverage), 4) if coverage else None
    metrics["forbidden_text_rate"] = round(mean([1.0 if c["forbidden"] else 0.0 for c in asked]), 4) if asked else None
    cited = [c["citation_correct"] for c in asked if c["citation_correct"] is not None]
    metrics["citation_accuracy"] = round(mean([1.0 if x else 0.0 for x in cited]), 4) if cited else None
    stale = [c for c in asked if c["type"] == "stale"]
    metrics["stale_answer_rate"] = (round(mean([1.0 if c["forbidden"] or c["stale_cited"] else 0.0 for c in stale]), 4)
                                    if stale else None)
    metrics.update(proxy_metrics(asked))
    metrics["latency_ms_p50"] = round(percentile(latencies, 50), 1)
    metrics["latency_ms_p95"] = round(percentile(latencies, 95), 1)
    for stage, values in sorted(stages.items()):
        metrics[f"stage_{stage}_ms_p50"] = round(percentile(values, 50), 1)
        metrics[f"stage_{stage}_ms_p95"] = round(percentile(values, 95), 1)
    metrics["cases"] = len(cases)
    return metrics


def run_eval(*, golden: GoldenSet, tenant: Tenant, arms: Sequence[str], ks: Sequence[int] = (1, 3, 5, 10),
             progress: bool = False, say: Callable[[str], None] = lambda message: None) -> dict[str, Any]:
    judge = judge_from_settings()  # a judge that would grade its own model fails here, loudly
    chunks = tenant_chunks(tenant)
    report: dict[str, Any] = {"golden": golden.path, "tenant": tenant.slug, "ks": list(ks), "arms": {},
                              "errors": [], "machine": machine_facts(),
                              "judge": {"configured": judge is not None, "models": judge.models if judge else []}}
    for arm in arms:
        spec = ARMS[arm]
        reason = skip_reason(spec)
        if reason:
            # Listed with the reason, never run as some other arm under this name.
            report["arms"][arm] = {"metrics": {}, "cases": [], "hard_failures": [], "skipped": reason,
                                   "note": spec.note}
            continue
        arm_tenant, arm_chunks = tenant, chunks
        if spec.index_name:
            arm_tenant = shadow_build(tenant=tenant, name=spec.index_name, ingest=spec.ingest,
                                      progress=progress, say=say)
            arm_chunks = tenant_chunks(arm_tenant)
        arm_report, errors = run_arm(golden=golden, tenant=arm_tenant, arm=arm, ks=ks, progress=progress,
                                     chunks=arm_chunks, judge=judge)
        if arm_tenant.pk == tenant.pk:
            report["errors"] = errors
        report["arms"][arm] = {"metrics": arm_report.metrics, "cases": arm_report.cases,
                               "hard_failures": arm_report.hard_failures, "judge": arm_report.judge_note,
                               "note": spec.note, "tenant": arm_tenant.slug, "encoder": arm_report.encoder,
                               "errors": errors}
    report["judge"]["note"] = next((d["judge"] for d in report["arms"].values() if d.get("judge")),
                                   "skipped: no arm ran")
    report["intervals"] = report_intervals(report, retrieval_types=RETRIEVAL_TYPES)
    return report


def eval_run_store(*, tenant: Tenant, report: dict[str, Any]) -> Any:
    import json

    from evaluation.models import EvalRun

    clean = json.loads(json.dumps(report, default=str))
    with tenant_context(tenant.id):
        return EvalRun.objects.create(tenant=tenant, golden=str(report["golden"]), arms=list(report["arms"]),
                                      report=clean)
