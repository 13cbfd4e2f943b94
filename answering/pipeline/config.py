"""The configuration of the answer path: one frozen, typed value, built once by a surface from
settings and handed down explicitly, surface → flow → search → gate → answerer.

This module and retrieval/config.py (and cachelayer/config.py) are the only places below the
surfaces that read django.conf.settings for behaviour (config/tests/test_config_lint.py says
so). An evaluation arm is a named override of this value (with_overrides), not override_settings.
Building one reads a dozen attributes, so a surface builds it per request: a test that changes
`settings` sees its change without a cache to clear.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass, replace
from collections.abc import Mapping
from typing import Any, cast

from django.conf import settings

from cachelayer.config import CacheConfig
from retrieval.config import RetrievalConfig


@dataclass(frozen=True)
class GateConfig:
    """When a question escalates instead of being answered (answering.pipeline.gate)."""

    rerank_min: float  # the reranker's top probability must reach this
    min_query_coverage: float  # IDF-weighted share of the question's terms the context holds (0009, 0042)
    unknown_names: bool  # a question naming what no visible document mentions escalates (0051)
    min_vector_margin: float  # the floor of a fusion score: the retrieval's vector evidence margin (0042)

    @classmethod
    def from_settings(cls) -> GateConfig:
        return cls(rerank_min=settings.ANSWER_GATE_RERANK_MIN,
                   min_query_coverage=settings.ANSWER_GATE_MIN_QUERY_COVERAGE,
                   unknown_names=settings.ANSWER_GATE_UNKNOWN_NAMES,
                   min_vector_margin=settings.RETRIEVAL_MIN_VECTOR_MARGIN)


@dataclass(frozen=True)
class AnswerConfig:
    """What the answerers, the citation check, the trace and the cache read."""

    history_turns: int  # earlier turns of a conversation the answer path reads
    max_tokens: int  # most tokens a provider may write for one answer
    citation_min_similarity: float  # a claim below this to every cited chunk is flagged weak
    abstain_text: str  # what the asker reads when the desk escalates
    use_cache: bool  # look up and store answers (the evaluation runs without)
    cache_min_similarity: float  # a near-duplicate question's cosine that serves a cached answer
    cache_ttl_seconds: int

    @classmethod
    def from_settings(cls) -> AnswerConfig:
        return cls(history_turns=settings.ANSWER_HISTORY_TURNS,
                   max_tokens=settings.ANSWER_MAX_TOKENS,
                   citation_min_similarity=settings.ANSWER_CITATION_MIN_SIMILARITY,
                   abstain_text=settings.ANSWER_ABSTAIN_TEXT, use_cache=settings.CACHE_ENABLED,
                   cache_min_similarity=settings.CACHE_SEMANTIC_MIN_SIMILARITY,
                   cache_ttl_seconds=settings.CACHE_TTL_SECONDS)


@dataclass(frozen=True)
class Configuration:
    """The answerer reads retrieval.context_chunks: the chunks it reads are the ones the
    question's coverage was measured on, one field for both."""

    retrieval: RetrievalConfig
    gate: GateConfig
    answer: AnswerConfig

    @classmethod
    def from_settings(cls) -> Configuration:
        return cls(retrieval=RetrievalConfig.from_settings(), gate=GateConfig.from_settings(),
                   answer=AnswerConfig.from_settings())

    @property
    def cache(self) -> CacheConfig:
        return CacheConfig(semantic_min_similarity=self.answer.cache_min_similarity,
                           ttl_seconds=self.answer.cache_ttl_seconds, context_chunks=self.retrieval.context_chunks)

    def with_overrides(self, overrides: Mapping[str, Any]) -> Configuration:
        """This configuration with dotted fields replaced: {"retrieval.rerank_mode": "off",
        "answer.use_cache": False}. An unknown field raises, so an arm cannot override nothing.

        RETRIEVAL_MIN_VECTOR_MARGIN is two fields, the evidence label's (retrieval) and the
        gate's fusion floor (gate): an override names the one whose behaviour it changes."""
        result = self
        for dotted, value in overrides.items():
            result = cast(Configuration, _replaced(result, dotted.split("."), value, dotted))
        return result


def _replaced(node: Any, path: list[str], value: Any, dotted: str) -> Any:
    names = {f.name for f in fields(node)} if is_dataclass(node) else set()
    if path[0] not in names:
        raise ValueError(f"no configuration field {dotted!r}")
    if len(path) == 1:
        return replace(node, **{path[0]: value})
    return replace(node, **{path[0]: _replaced(getattr(node, path[0]), path[1:], value, dotted)})


def configuration() -> Configuration:
    """What a surface passes down: the configuration as settings say now."""
    return Configuration.from_settings()
