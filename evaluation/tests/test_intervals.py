"""Bootstrap intervals and case-level wins and losses in the eval report."""

from __future__ import annotations

from typing import Any

from evaluation.intervals import bootstrap_interval, compare, paired_difference_interval, report_intervals
from evaluation.report import render_html

RETRIEVAL = ("normal", "multi_turn", "stale", "conflict")


def test_all_hits_give_the_degenerate_interval() -> None:
    assert bootstrap_interval([1.0] * 30) == (1.0, 1.0)
    assert bootstrap_interval([0.0] * 7) == (0.0, 0.0)


def test_known_small_sample() -> None:
    """Means of 4 draws from [1, 1, 1, 0] are k/4. P(mean = 0) = 0.004 and P(mean <= 0.25) = 0.051,
    so the 2.5th percentile is 0.25; P(mean = 1) = 0.32, so the 97.5th is 1."""
    assert bootstrap_interval([1.0, 1.0, 1.0, 0.0]) == (0.25, 1.0)


def test_interval_brackets_the_mean_and_is_about_the_normal_width() -> None:
    values = [1.0, 0.0] * 50  # mean 0.5, standard error 0.05: a 95% interval is about ±0.098
    low, high = bootstrap_interval(values) or (0, 0)
    assert 0.38 <= low <= 0.42 and 0.58 <= high <= 0.62


def test_fixed_seed_repeats_and_another_seed_differs() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.5, 0.0, 1.0, 0.25, 1.0, 0.0, 0.33, 1.0]
    assert bootstrap_interval(values) == bootstrap_interval(values)
    assert bootstrap_interval(values, seed=1, resamples=200) != bootstrap_interval(values, seed=2, resamples=200)


def test_empty_sample_has_no_interval() -> None:
    assert bootstrap_interval([]) is None
    assert paired_difference_interval([], []) is None


def test_paired_difference_of_identical_arms_is_zero() -> None:
    values = [1.0, 0.0, 1.0, 0.0, 1.0]
    assert paired_difference_interval(values, values) == (0.0, 0.0)


def test_wins_and_losses_name_the_cases() -> None:
    mine = {"page_recall@5": {"a": 1.0, "b": 0.0, "c": 1.0, "d": 1.0}}
    base = {"page_recall@5": {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0}}
    result = compare(mine, base)
    assert result["wins"] == ["c", "d"] and result["losses"] == ["b"] and result["ties"] == 1
    assert result["delta"]["value"] == 0.25
    assert result["delta"]["low"] <= 0.25 <= result["delta"]["high"]


def _case(case_id: str, rank: int | None, *, kind: str = "normal", action: str = "answered",
          facts: float | None = None) -> dict[str, Any]:
    return {"id": case_id, "type": kind, "action": action, "page_hit_rank": rank, "hit_rank": rank,
            "expected": [] if kind == "must_abstain" else ["doc:x"], "retrieved": [], "fact_coverage": facts}


def _report() -> dict[str, Any]:
    base = [_case("q1", 1, facts=1.0), _case("q2", 7, facts=0.0), _case("q3", None, action="escalated", facts=0.0),
            _case("q4", 2, facts=0.5),
            _case("x1", None, kind="must_abstain", action="escalated"), _case("x2", None, kind="must_abstain")]
    other = [_case("q1", 3, facts=1.0), _case("q2", 2, facts=1.0), _case("q3", 1, facts=0.0), _case("q4", None, facts=0.0),
             _case("x1", None, kind="must_abstain"), _case("x2", None, kind="must_abstain")]
    return {"golden": "g.yaml", "tenant": "t", "ks": [1, 5, 10], "errors": [], "judge": {"note": ""},
            "arms": {"hybrid": {"metrics": {}, "cases": base, "hard_failures": []},
                     "vector": {"metrics": {}, "cases": other, "hard_failures": []},
                     "multi_query": {"metrics": {}, "cases": [], "hard_failures": [], "skipped": "no provider"}}}


def test_report_block_per_arm_and_against_the_first_arm() -> None:
    block = report_intervals(_report(), retrieval_types=RETRIEVAL)
    assert block["base_arm"] == "hybrid" and set(block["arms"]) == {"hybrid", "vector"}
    hybrid = block["arms"]["hybrid"]
    assert hybrid["page_recall@5"]["value"] == 0.5 and hybrid["page_recall@5"]["n"] == 4
    assert hybrid["page_recall@10"]["value"] == 0.75
    assert hybrid["page_mrr"]["value"] == round((1 + 1 / 7 + 0 + 0.5) / 4, 4)
    assert hybrid["must_abstain_recall"]["value"] == 0.5 and hybrid["false_abstention"]["value"] == 0.25
    for summary in hybrid.values():
        assert summary["low"] <= summary["value"] <= summary["high"]
    versus = block["against_base"]["vector"]
    assert versus["wins"] == ["q2", "q3"] and versus["losses"] == ["q4"]
    assert "multi_query" not in block["against_base"]
    assert hybrid["fact_coverage"]["value"] == 0.375 and hybrid["fact_coverage"]["n"] == 4
    facts = versus["facts"]
    assert facts["wins"] == ["q2"] and facts["losses"] == ["q4"] and facts["ties"] == 2
    assert facts["delta"]["value"] == 0.125


def test_a_case_without_facts_to_check_counts_for_no_fact_metric() -> None:
    report = _report()
    for arm in ("hybrid", "vector"):
        report["arms"][arm]["cases"][0]["fact_coverage"] = None
    block = report_intervals(report, retrieval_types=RETRIEVAL)
    assert block["arms"]["hybrid"]["fact_coverage"]["n"] == 3
    assert "q1" not in block["against_base"]["vector"]["facts"]["wins"] + block["against_base"]["vector"]["facts"]["losses"]


def test_html_report_shows_intervals_and_wins() -> None:
    report = _report()
    report["intervals"] = report_intervals(report, retrieval_types=RETRIEVAL)
    html = render_html(report)
    assert "95% interval" in html
    assert "0.5 [" in html  # hybrid page recall@5 with its bounds
    assert "q2, q3" in html and "q4" in html
    assert "+q2 / −q4; Δ 0.125 [" in html  # facts gained and lost, with the paired interval
