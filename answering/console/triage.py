"""Feedback triage: where an answer that got feedback most likely went wrong.

One heuristic category per trace, checked in a fixed order, first match wins:

1. cache      — the answer was served from the cache: it was written for an earlier asker,
                so fix (or purge) the entry before anything else.
2. stale_data — a cited source has since been archived, superseded, replaced by a newer
                version (re-ingested after the answer) or deleted.
3. retrieval  — the gate failed or barely passed, or nothing good was found.
4. generation — retrieval was fine, yet the answer was voted down or has weak claims.
5. unclear    — none of the above (an upvote on a healthy trace lands here too).

The order is the order of cheapest fix to most expensive, and also of certainty: a cache hit
or a stale source is a fact about the trace, "weak retrieval" is a judgement.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from answering.models import Trace
from corpus.models import Document
from tenants.rls import rls_transaction

CATEGORIES = ("cache", "stale_data", "retrieval", "generation", "unclear")
CATEGORY_LABELS = {
    "cache": gettext_lazy("Cache"), "stale_data": gettext_lazy("Stale data"), "retrieval": gettext_lazy("Retrieval"),
    "generation": gettext_lazy("Generation"), "unclear": gettext_lazy("Unclear"),
}
# A gate that passed by less than this is treated as weak retrieval: the two score kinds live
# on scales ~30x apart (answering/pipeline/gate.py), so the margin is per kind. For fusion (RRF, k=60)
# 0.02 sits above 1/61, the best a candidate found by only one of the two legs can score.
WEAK_MARGIN = {"rerank": 0.10, "fusion": 0.02, "query_coverage": 0.10}


@dataclass(frozen=True)
class SourceState:
    document_id: int
    status: str
    superseded: bool
    updated_at: dt.datetime


@dataclass(frozen=True)
class Triage:
    category: str
    reason: str

    @property
    def label(self) -> str:
        return str(CATEGORY_LABELS[self.category])


def cited_document_ids(trace: Trace) -> list[int]:
    return sorted({int(c["document_id"]) for c in trace.citations or [] if c.get("document_id") is not None})


def _stale_reason(trace: Trace, sources: Mapping[int, SourceState]) -> str | None:
    for document_id in cited_document_ids(trace):
        state = sources.get(document_id)
        if state is None:
            return _("cited document #%(id)s no longer exists") % {"id": document_id}
        if state.superseded:
            return _("cited document #%(id)s has been superseded by a newer version") % {"id": document_id}
        if state.status == Document.Status.ARCHIVED:
            return _("cited document #%(id)s is archived") % {"id": document_id}
        if state.updated_at > trace.created_at:
            return _("cited document #%(id)s was re-ingested after this answer") % {"id": document_id}
    return None


def _retrieval_reason(trace: Trace) -> str | None:
    gate = trace.gate or {}
    if gate and not gate.get("passed", False):
        return _("the gate failed: %(reason)s") % {"reason": gate.get("reason") or _("no reason recorded")}
    if not (trace.retrieval or {}).get("candidates"):
        return _("retrieval found no candidate")
    score, threshold, kind = gate.get("score"), gate.get("threshold"), gate.get("score_kind")
    if score is None or threshold is None:
        return _("no gate score recorded")
    margin = WEAK_MARGIN.get(str(kind), 0.0)
    if float(score) < float(threshold) + margin:
        return _("top %(kind)s score %(score)s passed the gate (%(threshold)s) by less than %(margin)s") % {
            "kind": kind, "score": f"{float(score):.4f}", "threshold": threshold, "margin": margin}
    return None


def _generation_reason(trace: Trace) -> str | None:
    weak = (trace.details or {}).get("weak_claims") or []
    if weak:
        return _("%(count)d claim(s) weakly supported by their citations") % {"count": len(weak)}
    if trace.action == Trace.Action.ESCALATED:
        # The gate passed (retrieval was checked first), so the model declined or failed.
        return _("retrieval passed the gate but no answer was generated")
    if trace.feedback == -1:
        return _("retrieval looked fine but the answer was voted down")
    return None


def triage(*, trace: Trace, sources: Mapping[int, SourceState]) -> Triage:
    """The category of one trace, given the current state of the documents it cited."""
    if trace.cache_hit:
        return Triage("cache", _("served from the answer cache"))
    for category, reason in (("stale_data", _stale_reason(trace, sources)), ("retrieval", _retrieval_reason(trace)),
                             ("generation", _generation_reason(trace))):
        if reason:
            return Triage(category, reason)
    return Triage("unclear", _("no signal in the trace; read the comment"))


def source_states(*, traces: Iterable[Trace]) -> dict[int, SourceState]:
    """The current state of every document the traces cite, read per tenant under its RLS settings."""
    wanted: dict[int, set[int]] = defaultdict(set)
    for trace in traces:
        wanted[trace.tenant_id].update(cited_document_ids(trace))
    states: dict[int, SourceState] = {}
    for tenant_id, ids in wanted.items():
        if not ids:
            continue
        # Metadata only (status, dates); archived and internal documents count, hence all audiences.
        with rls_transaction(tenant_id=tenant_id, all_audiences=True):
            rows = Document.objects.filter(tenant_id=tenant_id, id__in=ids).values_list(
                "id", "status", "superseded_by_id", "updated_at")
            for pk, status, superseded_by, updated_at in rows:
                states[pk] = SourceState(pk, status, superseded_by is not None, updated_at)
    return states


def triage_traces(*, traces: Iterable[Trace]) -> dict[int, Triage]:
    traces = list(traces)
    states = source_states(traces=traces)
    return {trace.pk: triage(trace=trace, sources=states) for trace in traces}


def triage_counts(*, traces: Iterable[Trace]) -> dict[str, int]:
    counts: dict[str, int] = {c: 0 for c in CATEGORIES}
    for result in triage_traces(traces=traces).values():
        counts[result.category] += 1
    return counts


def trace_triage(trace: Trace) -> Triage:
    return triage(trace=trace, sources=source_states(traces=[trace]))
