"""Layer four of isolation: no module but the scope (and its writer) names the chunk table.

A read of chunk rows outside tenants/scope.py (raw SQL naming corpus_chunk, or an ORM
model over it) fails here. Migrations create the table; tests may plant and probe it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ["config", "tenants", "corpus", "retrieval", "answering", "evaluation", "cachelayer", "bench"]
# tenants/writer.py takes the names from tenants/scope.py; it is listed so that moving them
# there would not need a lint change, and so the list says which modules touch the tables.
ALLOWED = {Path("tenants/scope.py"), Path("tenants/writer.py")}
PATTERN = re.compile(r"\b(corpus_chunk|corpus_term_stats|corpus_audience_stats)\b|\bChunk\.objects\b")


def chunk_table_offenders(root: Path, apps: list[str]) -> list[str]:
    offenders = []
    for app in apps:
        for path in sorted((root / app).rglob("*.py")):
            relative = path.relative_to(root)
            if relative in ALLOWED or "migrations" in relative.parts or "tests" in relative.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if PATTERN.search(line):
                    offenders.append(f"{relative}:{number}: {line.strip()}")
    return offenders


def test_only_the_scope_names_the_chunk_table() -> None:
    assert chunk_table_offenders(ROOT, APPS) == []


def test_forced_fail_lint_catches_a_debug_query(tmp_path: Path) -> None:
    (tmp_path / "retrieval").mkdir()
    (tmp_path / "retrieval" / "debug.py").write_text('cursor.execute("SELECT content FROM corpus_chunk")\n')
    assert chunk_table_offenders(tmp_path, ["retrieval"]) == [
        'retrieval/debug.py:1: cursor.execute("SELECT content FROM corpus_chunk")'
    ]
