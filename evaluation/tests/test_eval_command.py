"""The eval command end to end on a small golden set over the demo corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

GOLDEN = """
tenant: paylane
audience: public
cases:
  - id: d-1
    type: normal
    question: "What does error PL-4031 mean?"
    expected: [{source: doc, slug: api/errors}]
    must_contain: ["insufficient funds"]
  - id: d-2
    type: must_abstain
    question: "What is the capital of Mongolia?"
    expected: []
  - id: d-3
    type: greeting
    question: "hello"
  - id: d-4
    type: tenant_probe
    tenant: helpwise
    question: "What does error PL-4031 mean?"
    expected: [{source: doc, slug: api/errors}]
"""


@pytest.mark.django_db
def test_eval_writes_json_and_html_with_the_required_keys(demo_corpus: Any, tmp_path: Path) -> None:
    golden = tmp_path / "g.yaml"
    golden.write_text(GOLDEN)
    call_command("eval", golden=golden, arms="hybrid,keyword", json=tmp_path / "r.json", html=tmp_path / "r.html")
    report = json.loads((tmp_path / "r.json").read_text())
    metrics = report["arms"]["hybrid"]["metrics"]
    for key in ["recall@1", "recall@3", "recall@5", "recall@10", "mrr", "ndcg@10", "abstention_precision",
                "abstention_recall", "fact_coverage", "latency_ms_p50", "latency_ms_p95", "page_recall@5"]:
        assert key in metrics
    assert metrics["recall@5"] == 1.0 and metrics["fact_coverage"] == 1.0
    assert metrics["abstention_recall"] == 1.0 and report["arms"]["hybrid"]["hard_failures"] == []
    case = report["arms"]["hybrid"]["cases"][0]
    assert case["id"] == "d-1" and case["hit_rank"] == 1 and case["retrieved"]
    assert "<svg" in (tmp_path / "r.html").read_text()


@pytest.mark.django_db
def test_eval_refuses_unknown_arms_and_tenants(demo_corpus: Any, tmp_path: Path) -> None:
    golden = tmp_path / "g.yaml"
    golden.write_text(GOLDEN)
    with pytest.raises(CommandError, match="unknown arms"):
        call_command("eval", golden=golden, arms="hybrid,magic")
    with pytest.raises(CommandError, match="does not exist"):
        call_command("eval", golden=golden, tenant="nobody")
