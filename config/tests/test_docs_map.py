"""The knowledge map stays a map: every decision record is in the index with the status it
carries itself, and every document the README links to exists.

A record added without a `**Status:**` line, or left out of docs/decisions/README.md, or whose
status the index tells differently, fails here (issue 46).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECISIONS = ROOT / "docs" / "decisions"
INDEX = DECISIONS / "README.md"
STATUSES = ("in force", "superseded", "not adopted", "removed")
STATUS_LINE = re.compile(r"^\*\*Status:\*\* (?P<status>.+?)\.?$", re.M)
INDEX_ROW = re.compile(r"^\| \[(?P<number>\d{4})\]\((?P<file>[^)]+)\) \| (?P<summary>.+?) \| (?P<status>.+?) \|$", re.M)


def record_statuses(folder: Path) -> dict[str, str]:
    """Each record's file name and the status its own status line gives (within its first lines)."""
    found = {}
    for path in sorted(folder.glob("[0-9][0-9][0-9][0-9]-*.md")):
        head = "\n".join(path.read_text(encoding="utf-8").splitlines()[:8])
        match = STATUS_LINE.search(head)
        found[path.name] = match.group("status") if match else ""
    return found


def index_rows(index: Path) -> dict[str, str]:
    return {m.group("file"): m.group("status") for m in INDEX_ROW.finditer(index.read_text(encoding="utf-8"))}


def map_problems(folder: Path, index: Path) -> list[str]:
    records, rows = record_statuses(folder), index_rows(index)
    problems = []
    for name, status in records.items():
        if not status:
            problems.append(f"{name}: no **Status:** line near the top")
        elif not status.startswith(STATUSES):
            problems.append(f"{name}: status {status!r} starts with none of {', '.join(STATUSES)}")
        if name not in rows:
            problems.append(f"{name}: missing from {index.name}")
        elif status and rows[name] != status:
            problems.append(f"{name}: the index says {rows[name]!r}, the record {status!r}")
    problems += [f"{index.name} lists {name}, which does not exist" for name in rows if name not in records]
    return problems


def test_every_decision_record_is_in_the_index_with_its_status() -> None:
    assert len(record_statuses(DECISIONS)) >= 93
    assert map_problems(DECISIONS, INDEX) == []


def test_forced_fail_a_record_without_a_status_or_an_index_row_is_named(tmp_path: Path) -> None:
    (tmp_path / "0001-kept.md").write_text("# 0001 Kept\n\n**Status:** in force.\n\nText.\n")
    (tmp_path / "0002-forgotten.md").write_text("# 0002 Forgotten\n\n**Context.** No status.\n")
    (tmp_path / "0003-unlisted.md").write_text("# 0003 Unlisted\n\n**Status:** not adopted.\n")
    (tmp_path / "0004-disagrees.md").write_text("# 0004 Disagrees\n\n**Status:** superseded by 0005.\n")
    (tmp_path / "README.md").write_text(
        "| record | decision | status |\n|---|---|---|\n"
        "| [0001](0001-kept.md) | Kept. | in force |\n"
        "| [0002](0002-forgotten.md) | Forgotten. | in force |\n"
        "| [0004](0004-disagrees.md) | Disagrees. | in force |\n"
        "| [0009](0009-gone.md) | Gone. | in force |\n")
    assert map_problems(tmp_path, tmp_path / "README.md") == [
        "0002-forgotten.md: no **Status:** line near the top",
        "0003-unlisted.md: missing from README.md",
        "0004-disagrees.md: the index says 'in force', the record 'superseded by 0005'",
        "README.md lists 0009-gone.md, which does not exist",
    ]


def linked_paths(text: str) -> set[str]:
    """Repository paths a Markdown text links to, or names in backquotes under docs/ or bench/results/."""
    links = set(re.findall(r"\]\((?!https?:|#|mailto:)([^)#\s]+)", text))
    named = set(re.findall(r"`((?:docs|bench/results)/[^`*{}\s]+\.(?:md|json|svg|png|txt|html))`", text))
    return links | named


def test_the_readme_and_the_docs_link_only_to_files_that_exist() -> None:
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in sorted(linked_paths(doc.read_text(encoding="utf-8"))):
            base = ROOT if target.startswith(("docs/", "bench/")) else doc.parent
            if not (base / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert missing == []


def test_the_readme_is_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 260, "the README is the front page; details go to docs/"
    for required in ("make run", "make test", "docs/architecture.md", "docs/decisions/README.md", "docs/results.md"):
        assert required in readme, required
