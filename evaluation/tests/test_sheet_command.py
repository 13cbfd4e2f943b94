"""The reader's sheet and the proxies end to end on the demo corpus: `eval --sheet` after a run,
`eval_sheet` from a saved report and from a stored run, `eval --score` of the rated sheet."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

GOLDEN = Path(__file__).parent / "data" / "demo-small.yaml"


def _rate_all(sheet: Path, verdict: str, reason: str = "") -> None:
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row.update(verdict=verdict, reason=reason)
    with sheet.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


@pytest.fixture
def golden() -> Path:
    return GOLDEN


@pytest.mark.django_db
def test_every_report_carries_the_proxies_per_case_and_per_arm(demo_corpus: Any, golden: Path,
                                                              tmp_path: Path) -> None:
    call_command("eval", golden=golden, arms="hybrid", json=tmp_path / "r.json", html=tmp_path / "r.html",
                 no_store=True)
    report = json.loads((tmp_path / "r.json").read_text())
    cases = {c["id"]: c for c in report["arms"]["hybrid"]["cases"]}
    first = cases["d-1"]
    assert first["action"] == "answered" and first["answer"] and first["sources"][0]["number"] == 1
    assert 0.0 < first["answer_precision"] <= 1.0  # its sentences quote api/errors
    assert set(first["noise"]) == {"markup", "dangling", "doctest", "cut"}
    assert first["turn_contamination"] is None  # not a follow-up
    follow_up = cases["m-1"]
    assert follow_up["question"] == "ok and what about rotating a key?" and len(follow_up["history"]) == 2
    # Checked against the product's own answer to the previous question, asked again for it.
    assert follow_up["action"] == "answered" and follow_up["previous_answer"]
    assert follow_up["turn_contamination"] in (True, False) and isinstance(follow_up["repeated_sentences"], list)
    assert "answer_precision" not in cases["d-2"]  # escalated: nothing to read
    metrics = report["arms"]["hybrid"]["metrics"]
    for key in ("answer_precision", "turn_contamination", "noise_rate", "noise_markup", "noise_dangling",
                "noise_doctest", "noise_cut"):
        assert key in metrics
    assert metrics["answer_precision"] is not None and metrics["noise_rate"] is not None
    assert metrics["turn_contamination"] is not None
    assert report["intervals"]["arms"]["hybrid"]["answer_precision"]["n"] >= 1
    html = (tmp_path / "r.html").read_text()
    assert "answer precision" in html and "answer_precision" in html and "noise_rate" in html


@pytest.mark.django_db
def test_eval_writes_a_blind_sheet_and_scores_it_through_its_key(demo_corpus: Any, golden: Path,
                                                                 tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.csv"
    call_command("eval", golden=golden, arms="hybrid,keyword", sheet=sheet, no_store=True)
    key = json.loads((tmp_path / "sheet.key.json").read_text())
    assert {i["side"] for i in key["items"].values()} == {"hybrid", "keyword"}
    assert {i["case"] for i in key["items"].values()} == {"d-1", "d-2", "m-1"}  # answered or declined; no greeting, no probe
    text = sheet.read_text()
    assert "hybrid" not in text and "keyword" not in text and "Now asked: ok and what about rotating" in text
    with pytest.raises(CommandError, match="no verdict"):
        call_command("eval", score=sheet)
    _rate_all(sheet, "edit", "too long")
    out = tmp_path / "score.json"
    call_command("eval", score=sheet, json=out)
    result = json.loads(out.read_text())
    assert result["sides"]["hybrid"]["edit"] == 3 and result["sides"]["keyword"]["sent_as_is"] == 0.0
    assert result["versus"]["ties"] == 3
    _rate_all(sheet, "fine")
    with pytest.raises(CommandError, match="verdict 'fine' is not one of send, edit, wrong"):
        call_command("eval", score=sheet)


@pytest.mark.django_db
def test_a_sheet_needs_two_arms_and_a_golden_set_unless_scoring(demo_corpus: Any, golden: Path,
                                                               tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="exactly two arms"):
        call_command("eval", golden=golden, arms="hybrid", sheet=tmp_path / "s.csv")
    with pytest.raises(CommandError, match="--golden is required"):
        call_command("eval", arms="hybrid")


@pytest.mark.django_db
def test_eval_sheet_builds_one_sheet_from_a_saved_report_and_a_stored_run(demo_corpus: Any, golden: Path,
                                                                         tmp_path: Path) -> None:
    from evaluation.models import EvalRun
    from tenants.models import Tenant
    from tenants.rls import tenant_context

    call_command("eval", golden=golden, arms="hybrid", json=tmp_path / "before.json", no_store=True)
    call_command("eval", golden=golden, arms="hybrid")  # stored: the "after" side
    tenant = Tenant.objects.get(slug="paylane")
    with tenant_context(tenant.id):
        run = EvalRun.objects.filter(tenant=tenant).order_by("-id").values_list("id", flat=True).first()
    sheet = tmp_path / "ba.csv"
    call_command("eval_sheet", report=[f"before={tmp_path / 'before.json'}"], run=[f"after=paylane:{run}"],
                 arms="before:hybrid,after:hybrid", sample=2, seed=5, out=sheet)
    key = json.loads((tmp_path / "ba.key.json").read_text())
    assert len(key["items"]) == 4 and {i["side"] for i in key["items"].values()} == {"before:hybrid", "after:hybrid"}
    assert key["reports"] == [str(tmp_path / "before.json"), f"run paylane:{run}"]
    _rate_all(sheet, "send")
    call_command("eval", score=sheet, key=tmp_path / "ba.key.json")
    with pytest.raises(CommandError, match="has no evaluation run #999999"):
        call_command("eval_sheet", run=["paylane:999999"], out=tmp_path / "x.csv")
    with pytest.raises(CommandError, match="name two with --arms"):
        call_command("eval_sheet", report=[str(tmp_path / "before.json")], out=tmp_path / "x.csv")
