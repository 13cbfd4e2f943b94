"""Experiment arms: the same pipeline, one knob each.

`hybrid` is the live configuration. `vector` and `keyword` search by one of its legs alone
(diagnostics, not variants). Most arms are named overrides of the answer path's configuration
(answering.pipeline.config.Configuration.with_overrides) and run the full answer pipeline, so
retrieval and answer metrics are measured together; the cache is off during evaluation. Arms
that change what is indexed (contextual blurbs) are an ingest configuration with fields
replaced (corpus.config.IngestConfig), built into a shadow tenant of their own
(evaluation.shadow), so the live index is never touched.
An arm that needs a model provider and has none is reported as skipped with the reason,
never run as something else under its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings


@dataclass(frozen=True)
class Arm:
    overrides: Mapping[str, Any] = field(default_factory=dict)  # {"retrieval.rerank_mode": "off"}: Configuration fields
    mode: str = ""  # one retrieval leg alone (retrieval.search.MODES); "" is the product's search
    index_name: str = ""  # shadow tenant `<slug>--<index_name>`, built with `ingest`
    ingest: Mapping[str, Any] = field(default_factory=dict)  # IngestConfig fields the shadow is built with
    retrieval: str = "pipeline"  # pipeline | multi_query (retrieval-only: no answer metrics)
    needs_provider: bool = False
    note: str = ""


ARMS: dict[str, Arm] = {
    "hybrid": Arm(),
    "vector": Arm(mode="vector"),
    "keyword": Arm(mode="keyword"),
    "keyword_no_rerank": Arm({"retrieval.rerank_mode": "off"}, mode="keyword"),
    "hybrid_no_rerank": Arm({"retrieval.rerank_mode": "off"}),
    # Each leg's depth, measured in 0072.
    "per_leg_80": Arm({"retrieval.candidates_per_leg": 80}),
    # Fewer candidates re-encoded by the late-interaction reranker (20 by default): its cost is
    # linear in them, and it is most of a search's time (docs/decisions/0060).
    "hybrid_rerank_depth_10": Arm({"retrieval.rerank_depth": 10}),
    "hybrid_rerank_depth_8": Arm({"retrieval.rerank_depth": 8}),
    "hybrid_no_diversity": Arm({"retrieval.max_chunks_per_document": 0}),
    # The gate's floors at zero: every reranked case reaches the answerer, and each row records
    # the gate's signals (query coverage, vector margin, top rerank probability) so
    # bench/gate_fit.py can replay any gate on the real pipeline's outcomes. The vector margin
    # stays: it also decides which chunks count as evidence for the coverage the row records.
    "hybrid_gate_off": Arm({"gate.min_query_coverage": 0.0, "gate.rerank_min": 0.0, "gate.unknown_names": False}),
    # The gate without its unknown-name rule (docs/decisions/0051).
    "hybrid_names_off": Arm({"gate.unknown_names": False}),
    "contextual_llm": Arm(index_name="ctx-llm",
                          ingest={"contextualizer": "answering.pipeline.contextualize.contextualize"},
                          needs_provider=True, note="model-written blurb per chunk"),
    # The gate's coverage floor at zero, every other rule kept (unknown names, rerank floor): each
    # row records its question coverage, so bench/abstention_curve.py can replay any floor (0062).
    "coverage_open": Arm({"gate.min_query_coverage": 0.0}),
    # The defaults, index rebuilt as a shadow: what a shadow arm moves with no setting changed (0083).
    "shadow_rebuilt": Arm(index_name="rebuilt", note="the same defaults, the index built again"),
    "multi_query": Arm(retrieval="multi_query", needs_provider=True,
                       note="retrieval only: the model rephrases the question, rankings fused"),
}
DEFAULT_ARMS = ("hybrid", "vector", "keyword", "hybrid_no_rerank")


def skip_reason(arm: Arm) -> str | None:
    if arm.needs_provider and not settings.ANSWER_PROVIDERS.strip():
        return "skipped: needs a model provider (ANSWER_PROVIDERS) and none is configured"
    return None
