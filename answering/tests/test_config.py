"""The answer path's configuration: built from settings, overridden by name, and every eval arm's
overrides name fields it has (docs/decisions/0097)."""

from __future__ import annotations

from typing import Any

import pytest

from answering.pipeline.config import Configuration, configuration
from evaluation.arms import ARMS


def test_built_from_settings_as_they_are_now(settings: Any) -> None:
    settings.RETRIEVAL_RERANK_DEPTH = 7
    settings.ANSWER_GATE_MIN_QUERY_COVERAGE = 0.5
    settings.CACHE_ENABLED = False
    config = configuration()
    assert config.retrieval.rerank_depth == 7 and config.gate.min_query_coverage == 0.5
    assert not config.answer.use_cache
    assert config.cache.context_chunks == config.retrieval.context_chunks == settings.ANSWER_CONTEXT_CHUNKS


def test_overrides_replace_the_named_fields_and_nothing_else() -> None:
    base = Configuration.from_settings()
    changed = base.with_overrides({"retrieval.rerank_mode": "off", "gate.unknown_names": False})
    assert changed.retrieval.rerank_mode == "off" and not changed.gate.unknown_names
    assert changed.answer == base.answer and changed.retrieval.rerank_depth == base.retrieval.rerank_depth
    assert base.retrieval.rerank_mode == "always"  # frozen: the base is untouched


@pytest.mark.parametrize("dotted", ["retrieval.nope", "nope", "gate.rerank_min.x", "RETRIEVAL_RERANK_MODE"])
def test_an_override_of_no_field_raises(dotted: str) -> None:
    with pytest.raises(ValueError, match="no configuration field"):
        Configuration.from_settings().with_overrides({dotted: 1})


def test_every_arms_overrides_name_configuration_fields() -> None:
    base = Configuration.from_settings()
    for name, arm in ARMS.items():
        assert not any(key.isupper() for key in arm.overrides), name  # a setting name is not a field
        base.with_overrides(arm.overrides)
    assert base.with_overrides(ARMS["hybrid_no_rerank"].overrides).retrieval.rerank_mode == "off"
