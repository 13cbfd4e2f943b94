"""The blind sheet (evaluation/sheet.py): written without side names, reproducible, refused
when it does not fit its key, scored per side with wins and losses. Reports here are built by
hand; tests/test_sheet_command.py runs the commands on the demo corpus."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from evaluation.sheet import LabelledReport, SheetError, default_key, score_sheet, write_sheet


def _row(case_id: str, answer: str, *, history: list[dict[str, str]] | None = None,
         action: str = "answered") -> dict[str, Any]:
    return {"id": case_id, "type": "multi_turn" if history else "normal", "action": action,
            "question": f"question {case_id}?", "history": history or [], "answer": answer,
            "sources": [{"number": 1, "source_type": "doc", "slug": "api/errors", "title": "Errors",
                         "heading_path": "Errors > PL-4031", "url": ""}]}


def _report(golden: str, arms: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"golden": golden, "tenant": "paylane",
            "arms": {arm: {"metrics": {}, "cases": rows, "hard_failures": []} for arm, rows in arms.items()}}


def _two_arms(cases: int = 4, golden: str = "evaluation/golden/demo-paylane.yaml") -> LabelledReport:
    rows = {arm: [_row(f"c{i}", f"{arm} answer {i}. [1]") for i in range(cases)] for arm in ("hybrid", "vector")}
    rows["hybrid"].append({"id": "greet", "type": "greeting", "passed": True})  # never on a sheet
    return LabelledReport("", golden, _report(golden, rows))


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _rate(sheet: Path, key: Path, verdict_of: dict[str, str]) -> None:
    """Fill every row's verdict by the side the key gives it (the test reads the key; a rater would not)."""
    sides = json.loads(key.read_text())["items"]
    rows = _read(sheet)
    for row in rows:
        row["verdict"] = verdict_of[sides[row["item"]]["side"]]
        row["reason"] = "" if row["verdict"] == "send" else "says too little"
    with sheet.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_the_sheet_names_no_side_and_the_key_names_every_item(tmp_path: Path) -> None:
    sheet, key = tmp_path / "s.csv", tmp_path / "s.key.json"
    written = write_sheet(reports=[_two_arms()], sides=["hybrid", "vector"], sheet=sheet, key=key)
    text = sheet.read_text()
    rows = _read(sheet)
    assert list(rows[0]) == ["item", "question", "answer", "sources", "verdict", "reason"]
    assert len(rows) == 8 and "greet" not in text
    # The answers here carry the arm's name on purpose; only the answer column may say it.
    assert not any("hybrid" in v or "vector" in v for r in rows for k, v in r.items() if k != "answer")
    assert {i["side"] for i in written["items"].values()} == {"hybrid", "vector"}
    assert [r["item"] for r in rows] == sorted(written["items"])
    assert default_key(sheet) == key


def test_the_same_seed_writes_the_same_sheet_and_another_seed_another(tmp_path: Path) -> None:
    report = _two_arms(cases=12)
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        write_sheet(reports=[report], sides=["hybrid", "vector"], sheet=tmp_path / f"{name}.csv",
                    key=tmp_path / f"{name}.json", seed=seed)
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    assert (tmp_path / "a.csv").read_text() != (tmp_path / "c.csv").read_text()


def test_a_follow_up_is_shown_with_its_turns_and_an_escalation_as_one(tmp_path: Path) -> None:
    history = [{"role": "user", "content": "How much is Growth?"}, {"role": "assistant", "content": "49 EUR."}]
    rows = {arm: [_row("m1", "Cards abroad cost 1% more. [1]", history=history),
                  _row("e1", "", action="escalated")] for arm in ("hybrid", "vector")}
    write_sheet(reports=[LabelledReport("", "g.json", _report("g.yaml", rows))], sides=["hybrid", "vector"],
                sheet=tmp_path / "s.csv", key=tmp_path / "k.json")
    questions = {r["question"] for r in _read(tmp_path / "s.csv")}
    assert "Earlier in the conversation:\nuser: How much is Growth?\nassistant: 49 EUR.\n\nNow asked: question m1?" \
        in questions
    assert "(no answer: handed to a person)" in {r["answer"] for r in _read(tmp_path / "s.csv")}


def test_a_sample_reaches_every_set_and_labelled_reports_compare_before_with_after(tmp_path: Path) -> None:
    reports = [LabelledReport(label, f"{label}-{name}.json",
                              _report(f"{name}.yaml", {"hybrid": [_row(f"c{i}", f"{label} {name} {i}. [1]")
                                                                  for i in range(10)]}))
               for label in ("before", "after") for name in ("pgdocs-dev", "demo-paylane")]
    written = write_sheet(reports=reports, sides=["before:hybrid", "after:hybrid"], sheet=tmp_path / "s.csv",
                          key=tmp_path / "k.json", sample=4, seed=1)
    assert len(written["items"]) == 8
    assert {i["set"] for i in written["items"].values()} == {"pgdocs-dev", "demo-paylane"}
    with pytest.raises(SheetError, match="only 10 are answered by both sides"):
        write_sheet(reports=[reports[0], reports[2]], sides=["before:hybrid", "after:hybrid"], sheet=tmp_path / "t.csv",
                    key=tmp_path / "t.json", sample=11)


def test_sides_are_checked_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(SheetError, match="exactly two sides"):
        write_sheet(reports=[_two_arms()], sides=["hybrid"], sheet=tmp_path / "s.csv", key=tmp_path / "k.json")
    with pytest.raises(SheetError, match=r"no side \['keyword'\]"):
        write_sheet(reports=[_two_arms()], sides=["hybrid", "keyword"], sheet=tmp_path / "s.csv",
                    key=tmp_path / "k.json")
    with pytest.raises(SheetError, match="label the reports"):
        write_sheet(reports=[_two_arms(), _two_arms()], sides=["hybrid", "vector"], sheet=tmp_path / "s.csv",
                    key=tmp_path / "k.json")
    assert not (tmp_path / "s.csv").exists()


def test_score_counts_verdicts_per_side_with_intervals_and_case_wins(tmp_path: Path) -> None:
    sheet, key = tmp_path / "s.csv", tmp_path / "s.key.json"
    write_sheet(reports=[_two_arms(cases=5)], sides=["hybrid", "vector"], sheet=sheet, key=key)
    _rate(sheet, key, {"hybrid": "send", "vector": "edit"})
    result = score_sheet(sheet=sheet, key_path=key)
    assert result["cases"] == 5
    assert result["sides"]["hybrid"] == {"n": 5, "send": 5, "edit": 0, "wrong": 0, "sent_as_is": 1.0,
                                         "interval": [1.0, 1.0]}
    assert result["sides"]["vector"]["edit"] == 5 and result["sides"]["vector"]["sent_as_is"] == 0.0
    versus = result["versus"]
    assert versus["wins"] == [f"demo-paylane/c{i}" for i in range(5)] and versus["losses"] == []
    assert versus["sent_as_is_delta"] == 1.0


def _rated(tmp_path: Path) -> tuple[Path, Path, list[dict[str, str]]]:
    sheet, key = tmp_path / "s.csv", tmp_path / "s.key.json"
    write_sheet(reports=[_two_arms()], sides=["hybrid", "vector"], sheet=sheet, key=key)
    _rate(sheet, key, {"hybrid": "send", "vector": "wrong"})
    return sheet, key, _read(sheet)


def _write(sheet: Path, rows: list[dict[str, str]]) -> None:
    with sheet.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


@pytest.mark.parametrize(("change", "message"), [
    (lambda rows: rows[2].update(verdict=""), "line 4, item R003: no verdict"),
    (lambda rows: rows[2].update(verdict="maybe"), "item R003: verdict 'maybe' is not one of send, edit, wrong"),
    (lambda rows: rows[2].update(verdict="edit", reason=""), "item R003: a verdict of 'edit' needs its one-line"),
    (lambda rows: rows[2].update(item="R999"), "item R999: the item is not in the key"),
    (lambda rows: rows[2].update(answer="a better answer, edited in"), "item R003: the question or answer differs"),
    (lambda rows: rows.__setitem__(3, dict(rows[2])), "item R003 appears twice"),
    (lambda rows: rows.pop(2), "the key holds items the sheet lacks: R003"),
])
def test_a_sheet_that_does_not_fit_its_key_is_refused_naming_the_item(tmp_path: Path, change: Any,
                                                                      message: str) -> None:
    sheet, key, rows = _rated(tmp_path)
    change(rows)
    _write(sheet, rows)
    with pytest.raises(SheetError, match=message.replace("(", r"\(")):
        score_sheet(sheet=sheet, key_path=key)


def test_a_key_of_another_sheet_is_refused(tmp_path: Path) -> None:
    sheet, key, _ = _rated(tmp_path)
    other = _two_arms(cases=5, golden="evaluation/golden/demo-helpwise.yaml")
    write_sheet(reports=[other], sides=["hybrid", "vector"], sheet=tmp_path / "o.csv", key=tmp_path / "o.json")
    with pytest.raises(SheetError, match="differs from the sheet|not in the key|sheet lacks"):
        score_sheet(sheet=sheet, key_path=tmp_path / "o.json")
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(SheetError, match="not a sheet key"):
        score_sheet(sheet=sheet, key_path=tmp_path / "bad.json")
