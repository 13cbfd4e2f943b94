"""The gate runs on the demo tenant in the suite, and is shown to fail when a hard assertion
is broken on purpose."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from evaluation.gate import run_gate
from evaluation.golden import load_golden
from tenants.models import Tenant

DEMO = Path(__file__).resolve().parents[1] / "golden" / "demo-paylane.yaml"


@pytest.mark.django_db
def test_the_gate_passes_on_the_demo_tenant(demo_corpus: Any, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("gate", golden=[DEMO])
    out = capsys.readouterr().out
    assert "gate passed" in out and "checker_can_fail" in out and "DID NOT RUN" not in out


@pytest.mark.django_db
def test_forced_fail_disabling_abstention_fails_the_gate(demo_corpus: Any, settings: Any) -> None:
    # Break the defences on purpose: no evidence floor, no coverage gate. Must-abstain
    # questions now get fluent answers, which is exactly what the gate exists to stop.
    settings.RETRIEVAL_VECTOR_SIMILARITY_FLOOR = -1.0
    settings.RETRIEVAL_KEYWORD_COVERAGE_MIN = 0.0
    settings.ANSWER_GATE_MIN_QUERY_COVERAGE = 0.0
    golden = load_golden(DEMO)
    subset = type(golden)(path=golden.path, tenant=golden.tenant, audience=golden.audience,
                          cases=tuple(c for c in golden.cases if c.type == "must_abstain") + golden.cases[:2])
    result = run_gate(golden=subset, tenant=Tenant.objects.get(slug="paylane"))
    assert not result.passed
    assert result.checks["no_must_abstain_answered"]["ran"]
    assert not result.checks["no_must_abstain_answered"]["passed"]


@pytest.mark.django_db
def test_a_check_that_did_not_run_fails(demo_corpus: Any, tmp_path: Path) -> None:
    golden = tmp_path / "tiny.yaml"
    golden.write_text("tenant: paylane\ncases:\n  - {id: x, type: normal, question: 'What does error PL-4031 mean?',"
                      " expected: [{source: doc, slug: api/errors}]}\n")
    with pytest.raises(CommandError, match="gate failed"):
        call_command("gate", golden=[golden])
