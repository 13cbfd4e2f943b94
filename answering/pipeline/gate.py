"""The confidence gate: two thresholds, chosen by which score the data carries.

A reranker sigmoid and a fusion score live on scales ~30× apart; one threshold is wrong for
at least one of them. The kind is read from the top candidate (config knows the intent, only
the result knows what ran) and recorded, so "score 0.02" is readable in a trace months later.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings

from retrieval.search import Candidate


@dataclass(frozen=True)
class GateDecision:
    passed: bool
    score: float | None
    score_kind: str | None
    threshold: float | None
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def confidence_gate(candidates: list[Candidate], query_coverage: float | None = None) -> GateDecision:
    if not candidates:
        return GateDecision(False, None, None, None, "no candidate passed the evidence filter")
    minimum = settings.ANSWER_GATE_MIN_QUERY_COVERAGE
    if query_coverage is not None and query_coverage < minimum:
        # The question's distinctive words appear nowhere in what was found ("Bitcoin" asked
        # of a corpus that never mentions it): topical neighbours are not an answer.
        return GateDecision(False, query_coverage, "query_coverage", minimum,
                            f"query coverage {query_coverage:.2f} < {minimum}")
    top = candidates[0]
    kind = top.score_kind
    threshold = settings.ANSWER_GATE_RERANK_MIN if kind == "rerank" else settings.ANSWER_GATE_FUSION_MIN
    if top.score < threshold:
        return GateDecision(False, top.score, kind, threshold, f"top {kind} score {top.score:.4f} < {threshold}")
    return GateDecision(True, top.score, kind, threshold, "confident enough")
