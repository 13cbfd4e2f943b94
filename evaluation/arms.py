"""Experiment arms: the same pipeline, one knob each.

`hybrid` is the live configuration. `vector` and `keyword` search by one of its legs alone
(diagnostics, not variants). Most arms are named overrides of the answer path's configuration
(answering.pipeline.config.Configuration.with_overrides) and run the full answer pipeline, so
retrieval and answer metrics are measured together; the cache is off during evaluation. Arms that change what is indexed (contextual blurbs, key schemes, encoders) are built
into a shadow tenant of their own (evaluation.shadow), so the live index is never touched.
An arm that needs a model provider and has none is reported as skipped with the reason,
never run as something else under its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from django.conf import settings


@dataclass(frozen=True)
class Arm:
    overrides: Mapping[str, Any] = field(default_factory=dict)  # {"retrieval.rerank_mode": "off"}: Configuration fields
    # Settings the index side also reads at query time (language keys, the encoder), for the arms
    # with a shadow index: applied with override_settings until ingest takes a configuration too.
    settings: Mapping[str, Any] = field(default_factory=dict)
    mode: str = ""  # one retrieval leg alone (retrieval.search.MODES); "" is the product's search
    index_name: str = ""  # shadow tenant `<slug>--<index_name>`, built with index_settings
    index_settings: Mapping[str, Any] = field(default_factory=dict)
    retrieval: str = "pipeline"  # pipeline | multi_query (retrieval-only: no answer metrics)
    needs_provider: bool = False
    note: str = ""

    def for_tenant(self, slug: str) -> Arm:
        """The arm with `{tenant}` in its string settings filled in: a tenant's own adapted encoder."""

        def fill(values: Mapping[str, Any]) -> dict[str, Any]:
            return {k: v.format(tenant=slug) if isinstance(v, str) else v for k, v in values.items()}

        return replace(self, settings=fill(self.settings), index_settings=fill(self.index_settings))


_ADAPTED = {"EMBEDDING_BACKEND": "torch", "EMBEDDING_MODEL_NAME": "all-MiniLM-L6-v2-adapted-{tenant}",
            "EMBEDDING_MODEL_PATH": str(settings.BASE_DIR / "var" / "encoders" / "adapted" / "{tenant}")}

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
                          index_settings={"CORPUS_CONTEXTUALIZER": "answering.pipeline.contextualize.contextualize"},
                          needs_provider=True, note="model-written blurb per chunk"),
    # A language keyed in Python (docs/decisions/0050): the same documents indexed and asked with
    # `simple` tokens (no keys), or with the four-letter prefix keys that lemma + stem replaced.
    # Both change what is indexed, so each has its shadow; on an English tenant both equal hybrid.
    "keys_simple": Arm(settings={"LANGUAGE_KEYS": "simple"}, index_name="keys-simple",
                       index_settings={"LANGUAGE_KEYS": "simple"}, note="no lemma, stem or prefix keys"),
    "keys_prefix": Arm(settings={"LANGUAGE_KEYS": "prefix"}, index_name="keys-prefix",
                       index_settings={"LANGUAGE_KEYS": "prefix"}, note="four-letter prefix keys only"),
    # The same three on the keyword leg alone, which carries a language the encoder does not read.
    "keyword_keys_simple": Arm(settings={"LANGUAGE_KEYS": "simple"}, mode="keyword", index_name="keys-simple",
                               index_settings={"LANGUAGE_KEYS": "simple"}, note="keyword leg, no keys"),
    "keyword_keys_prefix": Arm(settings={"LANGUAGE_KEYS": "prefix"}, mode="keyword", index_name="keys-prefix",
                               index_settings={"LANGUAGE_KEYS": "prefix"}, note="keyword leg, prefix keys"),
    # The gate's coverage floor at zero, every other rule kept (unknown names, rerank floor), for
    # each key scheme: each row records its question coverage, so bench/abstention_curve.py can
    # replay any floor and compare the schemes at the same false-abstention rate (0062).
    "coverage_open": Arm({"gate.min_query_coverage": 0.0}),
    "keys_simple_coverage_open": Arm({"gate.min_query_coverage": 0.0}, settings={"LANGUAGE_KEYS": "simple"},
                                     index_name="keys-simple", index_settings={"LANGUAGE_KEYS": "simple"},
                                     note="no keys, coverage floor 0"),
    "keys_prefix_coverage_open": Arm({"gate.min_query_coverage": 0.0}, settings={"LANGUAGE_KEYS": "prefix"},
                                     index_name="keys-prefix", index_settings={"LANGUAGE_KEYS": "prefix"},
                                     note="prefix keys only, coverage floor 0"),
    # The same pipeline on PyTorch's vectors: a shadow index encoded by torch, asked with torch
    # (docs/decisions/0060), so `make pgdocs-eval` compares the encoders in one run.
    "encoder_torch": Arm(settings={"EMBEDDING_BACKEND": "torch"}, index_name="encoder-torch",
                         index_settings={"EMBEDDING_BACKEND": "torch"}, note="torch vectors, torch queries"),
    # The float ONNX export (the same vectors as torch, to rounding: bench/results/batch-mates.json),
    # and int8 with every chunk encoded alone, as every question is (docs/decisions/0069).
    "encoder_onnx": Arm(settings={"EMBEDDING_BACKEND": "onnx"}, index_name="encoder-onnx",
                        index_settings={"EMBEDDING_BACKEND": "onnx"}, note="float ONNX vectors and queries"),
    "encoder_int8_alone": Arm(index_name="int8-alone", index_settings={"EMBEDDING_BATCH_SIZE": 1},
                              note="int8, each chunk encoded in a batch of its own"),
    # The encoder fine-tuned on the tenant's own heading → section pairs (bench/adapt_encoder.py,
    # docs/decisions/0074): torch, vectors and questions both.
    "encoder_adapted": Arm(settings=_ADAPTED, index_name="encoder-adapted", index_settings=_ADAPTED,
                           note="torch, fine-tuned on the tenant's heading → section pairs"),
    "vector_adapted": Arm(settings=_ADAPTED, mode="vector", index_name="encoder-adapted",
                          index_settings=_ADAPTED, note="the adapted encoder's dense leg alone, reranked (as vector)"),
    # The defaults, index rebuilt as a shadow: what a shadow arm moves with no setting changed (0083).
    "shadow_rebuilt": Arm(index_name="rebuilt", note="the same defaults, the index built again"),
    "multi_query": Arm(retrieval="multi_query", needs_provider=True,
                       note="retrieval only: the model rephrases the question, rankings fused"),
}
DEFAULT_ARMS = ("hybrid", "vector", "keyword", "hybrid_no_rerank")


def skip_reason(arm: Arm) -> str | None:
    if arm.needs_provider and not settings.ANSWER_PROVIDERS.strip():
        return "skipped: needs a model provider (ANSWER_PROVIDERS) and none is configured"
    path = arm.settings.get("EMBEDDING_MODEL_PATH")
    if path and not Path(path).is_dir():
        return f"skipped: no encoder at {path} (bench/adapt_encoder.py makes one)"
    return None
