"""The confidence gate: the question's coverage by the context, then a floor per score kind.

A reranker sigmoid and a fusion score live on scales ~30x apart; one threshold is wrong for
at least one of them. The kind is read from the top candidate (config knows the intent, only
the result knows what ran) and recorded, so "score 0.02" is readable in a trace months later.
A fusion score is a rank statistic (the top candidate always has one), so the fusion kind's
floor is the calibrated vector evidence instead: the best cosine's margin above the scope's
chance level (retrieval.calibration, docs/decisions/0042). Low coverage is forgiven when
the question's rarest missing word pulls it towards the evidence, as a synonym would (0067).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from answering.pipeline.config import GateConfig
from retrieval.search import Candidate

# The pull a missing word needs to forgive low coverage (fitted in docs/decisions/0067).
PULL_RESCUE = 0.12


@dataclass(frozen=True)
class GateDecision:
    passed: bool
    score: float | None
    score_kind: str | None
    threshold: float | None
    reason: str
    # "pull" when low coverage was forgiven for a missing word's pull (0067), else "".
    rescue: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def confidence_gate(candidates: list[Candidate], query_coverage: float | None = None,
                    vector_margin: float | None = None, unknown_names: tuple[str, ...] = (),
                    vector_evidence: bool = True, lacking_pull: float | None = None,
                    config: GateConfig | None = None) -> GateDecision:
    """`vector_margin` is the search's (SearchResult.vector_margin); without it, the best margin
    among `candidates` stands in (lower when the best cosine was reranked out of them).
    `unknown_names`: SearchResult.unknown_names. `vector_evidence` is False in a language the
    encoder does not read (docs/decisions/0062): its cosines are no floor for a fusion score.
    `lacking_pull`: retrieval.pull's number for the question's most distinctive missing word.
    `config`: the flow's (answering.pipeline.config); a direct caller that passes none gets settings'."""
    config = config or GateConfig.from_settings()
    if not candidates:
        return GateDecision(False, None, None, None, "no candidate came back")
    if unknown_names and config.unknown_names:
        # A product or project the documentation never mentions ("a Flask blueprint" asked of
        # Django's docs): its neighbours answer another question (docs/decisions/0051).
        return GateDecision(False, None, "unknown_name", None,
                            f"the question names {', '.join(unknown_names)}, which no visible document mentions")
    margin = max(c.vector_margin for c in candidates) if vector_margin is None else vector_margin
    minimum = config.min_query_coverage
    rescue = ""
    if query_coverage is not None and query_coverage < minimum:
        rescue = "pull" if _pulled(lacking_pull) else ""
        if not rescue:
            # The question's distinctive words appear nowhere in what was found ("Bitcoin" asked
            # of a corpus that never mentions it): topical neighbours are not an answer.
            return GateDecision(False, query_coverage, "query_coverage", minimum,
                                f"query coverage {query_coverage:.2f} < {minimum}")
    return replace(_score_floor(candidates[0], margin, vector_evidence, config), rescue=rescue)


def _score_floor(top: Candidate, margin: float, vector_evidence: bool, config: GateConfig) -> GateDecision:
    if top.score_kind == "rerank":
        threshold = config.rerank_min
        if top.score < threshold:
            return GateDecision(False, top.score, "rerank", threshold, f"top rerank score {top.score:.4f} < {threshold}")
        return GateDecision(True, top.score, "rerank", threshold, "confident enough")
    floor = config.min_vector_margin
    if not vector_evidence:  # a fusion score, a rank statistic, is no evidence: no floor of its own
        return GateDecision(True, top.score, "fusion", 0.0,
                            "confident enough: the question's coverage decides in a language the encoder does not read")
    if margin < floor:
        return GateDecision(False, margin, "vector_margin", floor,
                            f"best cosine {margin:.3f} above chance < {floor}: no vector evidence")
    return GateDecision(True, margin, "vector_margin", floor, "confident enough")


def _pulled(lacking_pull: float | None) -> bool:
    """A paraphrase in a word the pages do not use ("throttled" of a page on rate limits): the
    word moves the question towards the evidence as a synonym would. A topic the pages never
    treat ("translate" asked of automation rules) moves it away (docs/decisions/0067)."""
    return lacking_pull is not None and lacking_pull >= PULL_RESCUE

