"""A reader's verdict, blind (issue 47 item 1; the rubric is docs/reader-rubric.md, the choice of
commands docs/decisions/0098).

`write_sheet` puts two sides' answers to the same cases (two arms of one report, or the same
arm of a report from before and one from after a change) in one shuffled CSV sheet, without a
side's name, and writes the key (item → set, case, side) to a separate file the rater does not
open. `score_sheet` joins the rater's verdicts back through the key and reports, per side, the
share sent as is with its bootstrap interval, the counts of the three verdicts, and the cases
one side's answer was rated better or worse than the other's. A sheet that does not fit its key
is refused, naming the item: nothing is guessed.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.intervals import bootstrap_interval, paired_difference_interval

VERDICTS = ("send", "edit", "wrong")  # best first: send as is, send after an edit, wrong or unhelpful
COLUMNS = ("item", "question", "answer", "sources", "verdict", "reason")
KEY_VERSION = 1
DEFAULT_SEED = 47


class SheetError(ValueError):
    """A sheet, key or report that cannot be used as it is; the message names the item or file."""


@dataclass(frozen=True)
class LabelledReport:
    """One eval report and the label its arms' sides carry ("" for none: the side is the arm)."""

    label: str
    origin: str  # the file or stored run it came from, recorded in the key
    report: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """One side's answer to one case, as the rater is shown it."""

    set_name: str
    case: str
    side: str
    question: str
    answer: str
    sources: str


def default_key(sheet: Path) -> Path:
    """The key beside its sheet: sheet.csv → sheet.key.json."""
    return sheet.with_name(sheet.stem + ".key.json")


def side_name(label: str, arm: str) -> str:
    return f"{label}:{arm}" if label else arm


def question_text(row: dict[str, Any]) -> str:
    """The question with the turns before it: a follow-up is rated as the asker saw it."""
    turns = [f"{t['role']}: {t['content']}" for t in row.get("history") or []]
    if not turns:
        return str(row["question"])
    return "Earlier in the conversation:\n" + "\n".join(turns) + f"\n\nNow asked: {row['question']}"


def sources_text(row: dict[str, Any]) -> str:
    lines = []
    for source in row.get("sources") or []:
        title, heading = source.get("title") or "", source.get("heading_path") or ""
        # A heading path starts with its page's title already ("Errors > PL-4031").
        where = heading if heading.startswith(title) else " › ".join(p for p in (title, heading) if p)
        lines.append(f"[{source.get('number')}] {where} ({source.get('source_type')}:{source.get('slug')})"
                     + (f" {source['url']}" if source.get("url") else ""))
    return "\n".join(lines)


def _answer_of(row: dict[str, Any]) -> str:
    if row.get("answer"):
        return str(row["answer"])
    return "(no answer: handed to a person)" if row.get("action") == "escalated" else "(no answer)"


def collect_answers(reports: Sequence[LabelledReport]) -> dict[tuple[str, str], dict[str, Answer]]:
    """(set, case) → side → the answer; only asked cases (answered or escalated) that carry their
    text. A case two reports give the same side is refused: which one to rate would be a guess."""
    found: dict[tuple[str, str], dict[str, Answer]] = {}
    for labelled in reports:
        set_name = Path(str(labelled.report.get("golden", "?"))).stem
        for arm, data in labelled.report.get("arms", {}).items():
            side = side_name(labelled.label, arm)
            for row in data.get("cases") or []:
                if "action" not in row or "question" not in row:
                    continue  # a greeting, a probe, or a report written before answers were kept
                answers = found.setdefault((set_name, row["id"]), {})
                if side in answers:
                    raise SheetError(f"{labelled.origin}: case {set_name}/{row['id']} of side {side} "
                                     "is in another report too; label the reports (LABEL=PATH)")
                answers[side] = Answer(set_name, row["id"], side, question_text(row), _answer_of(row),
                                       sources_text(row))
    return found


def sample_cases(cases: Sequence[tuple[str, str]], *, sample: int | None, seed: int) -> list[tuple[str, str]]:
    """A seeded sample spread over the sets: each set's cases shuffled, then taken in turn, one
    set at a time, so a small sample still reaches every set."""
    if sample is not None and sample > len(cases):
        raise SheetError(f"asked for a sample of {sample} cases; only {len(cases)} are answered by both sides")
    rng = random.Random(seed)
    by_set: dict[str, list[tuple[str, str]]] = {}
    for case in sorted(cases):
        by_set.setdefault(case[0], []).append(case)
    for group in by_set.values():
        rng.shuffle(group)
    interleaved = [group[i] for i in range(max(map(len, by_set.values()), default=0))
                   for group in by_set.values() if i < len(group)]
    return interleaved[:sample] if sample is not None else interleaved


def fingerprint(question: str, answer: str) -> str:
    """What the key remembers of an item: a sheet whose question or answer changed is another sheet."""
    return hashlib.sha256(f"{question}\n\x00\n{answer}".encode()).hexdigest()[:16]


def available_sides(reports: Sequence[LabelledReport]) -> list[str]:
    return list(dict.fromkeys(side_name(r.label, arm) for r in reports for arm, data in r.report.get("arms", {}).items()
                              if not data.get("skipped")))


def write_sheet(*, reports: Sequence[LabelledReport], sides: Sequence[str], sheet: Path, key: Path,
                sample: int | None = None, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Write the shuffled sheet and its key; returns the key. Two sides, never their names on the sheet."""
    if len(sides) != 2 or sides[0] == sides[1]:
        raise SheetError(f"a sheet compares exactly two sides, got {list(sides)}")
    known = available_sides(reports)
    missing = [s for s in sides if s not in known]
    if missing:
        raise SheetError(f"no side {missing} in the reports; they have: {', '.join(known) or 'none'}")
    answers = collect_answers(reports)
    paired = [case for case, by_side in answers.items() if all(s in by_side for s in sides)]
    chosen = sample_cases(paired, sample=sample, seed=seed)
    if not chosen:
        raise SheetError(f"no case is answered by both {sides[0]} and {sides[1]}")
    items = [answers[case][side] for case in chosen for side in sides]
    random.Random(seed).shuffle(items)
    width = max(3, len(str(len(items))))
    key_items = {}
    # With a byte-order mark a spreadsheet reads Czech (any non-ASCII) text as UTF-8, not as Latin-1.
    with sheet.open("w", encoding="utf-8-sig", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        for number, item in enumerate(items, start=1):
            item_id = f"R{number:0{width}d}"
            writer.writerow({"item": item_id, "question": item.question, "answer": item.answer,
                             "sources": item.sources, "verdict": "", "reason": ""})
            key_items[item_id] = {"set": item.set_name, "case": item.case, "side": item.side,
                                  "fingerprint": fingerprint(item.question, item.answer)}
    written = {"version": KEY_VERSION, "sheet": sheet.name, "seed": seed, "sample": sample, "sides": list(sides),
               "reports": [r.origin for r in reports], "items": key_items}
    key.write_text(json.dumps(written, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return written


def read_key(path: Path) -> dict[str, Any]:
    try:
        key = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SheetError(f"{path}: cannot read the key: {exc}") from exc
    if not isinstance(key, dict) or key.get("version") != KEY_VERSION or not isinstance(key.get("items"), dict):
        raise SheetError(f"{path}: not a sheet key (version {KEY_VERSION} with items)")
    return key


@dataclass(frozen=True)
class Verdict:
    item: str
    verdict: str
    reason: str


def read_verdicts(path: Path, key: dict[str, Any]) -> list[Verdict]:
    """The rater's verdicts, each checked against the key; the first problem is raised, naming its item."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:  # a sheet saved with or without a BOM
            reader = csv.DictReader(handle)
            rows, header = list(reader), list(reader.fieldnames or [])
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise SheetError(f"{path}: cannot read the sheet: {exc}") from exc
    absent = [c for c in ("item", "question", "answer", "verdict", "reason") if c not in header]
    if absent:
        raise SheetError(f"{path}: the sheet has no column {', '.join(absent)}")
    verdicts, seen = [], set()
    for line, row in enumerate(rows, start=2):
        item = (row.get("item") or "").strip()
        verdicts.append(_checked(path, line, item, row, key))
        if item in seen:
            raise SheetError(f"{path} line {line}: item {item} appears twice")
        seen.add(item)
    unrated = sorted(set(key["items"]) - seen)
    if unrated:
        raise SheetError(f"{path}: the key holds items the sheet lacks: {', '.join(unrated[:10])}"
                         f"{' …' if len(unrated) > 10 else ''} (a sheet of another key?)")
    return verdicts


def _checked(path: Path, line: int, item: str, row: dict[str, Any], key: dict[str, Any]) -> Verdict:
    where = f"{path} line {line}, item {item or '(none)'}"
    if item not in key["items"]:
        raise SheetError(f"{where}: the item is not in the key (a sheet of another key?)")
    if fingerprint(row.get("question") or "", row.get("answer") or "") != key["items"][item]["fingerprint"]:
        raise SheetError(f"{where}: the question or answer differs from the sheet the key was written with")
    verdict = (row.get("verdict") or "").strip().lower()
    if not verdict:
        raise SheetError(f"{where}: no verdict (one of {', '.join(VERDICTS)})")
    if verdict not in VERDICTS:
        raise SheetError(f"{where}: verdict {row.get('verdict')!r} is not one of {', '.join(VERDICTS)}")
    reason = " ".join((row.get("reason") or "").split())
    if verdict != "send" and not reason:
        raise SheetError(f"{where}: a verdict of {verdict!r} needs its one-line reason")
    return Verdict(item, verdict, reason)


def score_sheet(*, sheet: Path, key_path: Path) -> dict[str, Any]:
    """Per side: verdict counts, the share sent as is with its interval; between the sides, the
    cases rated better (wins) and worse (losses) for the first side, and the paired interval of
    the difference in the share sent as is."""
    key = read_key(key_path)
    verdicts = read_verdicts(sheet, key)
    sides: list[str] = list(key["sides"])
    by_case: dict[str, dict[str, Verdict]] = {}
    for verdict in verdicts:
        entry = key["items"][verdict.item]
        by_case.setdefault(f"{entry['set']}/{entry['case']}", {})[entry["side"]] = verdict
    result: dict[str, Any] = {"sheet": str(sheet), "key": str(key_path), "sides": {}, "cases": len(by_case)}
    for side in sides:
        rated = [v.verdict for case in by_case.values() for s, v in case.items() if s == side]
        sent = [1.0 if v == "send" else 0.0 for v in rated]
        low_high = bootstrap_interval(sent)
        result["sides"][side] = {
            "n": len(rated), **{v: rated.count(v) for v in VERDICTS},
            "sent_as_is": round(sum(sent) / len(sent), 4) if sent else None,
            "interval": [round(low_high[0], 4), round(low_high[1], 4)] if low_high else None,
        }
    result["versus"] = _versus(by_case, sides)
    return result


def _versus(by_case: dict[str, dict[str, Verdict]], sides: list[str]) -> dict[str, Any]:
    first, second = sides
    rank = {v: i for i, v in enumerate(VERDICTS)}  # lower is better
    both = sorted(c for c, v in by_case.items() if first in v and second in v)
    wins = [c for c in both if rank[by_case[c][first].verdict] < rank[by_case[c][second].verdict]]
    losses = [c for c in both if rank[by_case[c][first].verdict] > rank[by_case[c][second].verdict]]
    sent = {s: [1.0 if by_case[c][s].verdict == "send" else 0.0 for c in both] for s in sides}
    delta = paired_difference_interval(sent[first], sent[second])
    return {"first": first, "second": second, "wins": wins, "losses": losses,
            "ties": len(both) - len(wins) - len(losses),
            "sent_as_is_delta": round((sum(sent[first]) - sum(sent[second])) / len(both), 4) if both else None,
            "interval": [round(delta[0], 4), round(delta[1], 4)] if delta else None}


def score_lines(result: dict[str, Any]) -> list[str]:
    """The score as a person reads it in a terminal."""
    lines = [f"{result['cases']} cases rated blind ({result['sheet']})"]
    for side, data in result["sides"].items():
        interval = data["interval"] or ["–", "–"]
        lines.append(f"{side}: sent as is {data['sent_as_is']} [{interval[0]}, {interval[1]}] of {data['n']} · "
                     + " · ".join(f"{v} {data[v]}" for v in VERDICTS))
    versus = result["versus"]
    interval = versus["interval"] or ["–", "–"]
    lines.append(f"{versus['first']} against {versus['second']}: {len(versus['wins'])} better, "
                 f"{len(versus['losses'])} worse, {versus['ties']} the same; Δ sent as is "
                 f"{versus['sent_as_is_delta']} [{interval[0]}, {interval[1]}]")
    lines.append(f"  better: {', '.join(versus['wins']) or '–'}")
    lines.append(f"  worse: {', '.join(versus['losses']) or '–'}")
    return lines
