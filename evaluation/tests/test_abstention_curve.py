"""bench/abstention_curve.py: the replay that compares key schemes at one false-abstention rate
(docs/decisions/0062). Pure arithmetic over eval rows; no database."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def curve() -> ModuleType:
    spec = importlib.util.spec_from_file_location("abstention_curve", ROOT / "bench" / "abstention_curve.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(case_id: str, kind: str, coverage: float, action: str = "answered") -> dict[str, Any]:
    return {"id": case_id, "type": kind, "action": action, "gate": {"query_coverage": coverage}}


def _report() -> dict[str, Any]:
    # keys: answerable questions well covered, must-abstain ones not; one escalated by another rule.
    keys = [_row("n1", "normal", 0.9), _row("n2", "normal", 0.6), _row("n3", "normal", 0.2),
            _row("a1", "must_abstain", 0.1), _row("a2", "must_abstain", 0.5, "escalated")]
    # no keys: every question covers nothing, answerable or not.
    none = [_row("n1", "normal", 0.0), _row("n2", "normal", 0.0), _row("n3", "normal", 0.5),
            _row("a1", "must_abstain", 0.0), _row("a2", "must_abstain", 0.0)]
    return {"arms": {"keys": {"cases": keys}, "none": {"cases": none}}}


def test_a_floor_is_replayed_with_the_runs_own_escalations(curve: ModuleType) -> None:
    rows = curve.load_rows(_report(), "keys")
    assert curve.rates(rows, 0.26) == (pytest.approx(1 / 3), 1.0)  # n3 refused; a1 by coverage, a2 by its rule
    assert curve.rates(rows, 0.0) == (0.0, 0.5)  # a2 stays escalated at any floor (seen red without esc_m)


def test_the_baseline_is_compared_at_the_highest_floor_refusing_no_more(curve: ModuleType) -> None:
    result = curve.compare(_report(), "keys", ["none"], floor=0.26, resamples=50, seed=1)
    none = result["against"]["none"]
    assert none["at_base_floor"] == {"false_abstention": pytest.approx(2 / 3), "must_abstain_recall": 1.0}
    assert none["matched_floor"] == 0.0 and none["must_abstain_recall"] == 0.0
    assert none["base_minus_arm_recall"]["value"] == 1.0
    assert none["base_at_this_arms_recall"]["floor"] == 0.11  # keys catch both once a1 (0.10) is under it
