"""Layer four of isolation: no module but the scope (and its writer) names the chunk table.

A read of chunk rows outside tenants/scope.py (raw SQL naming corpus_chunk, or an ORM
model over it) fails here. Migrations create the table; tests may plant and probe it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ["config", "tenants", "corpus", "retrieval", "answering", "evaluation", "cachelayer", "bench"]
# tenants/writer.py takes the names from tenants/scope.py; it is listed so that moving them
# there would not need a lint change, and so the list says which modules touch the tables.
ALLOWED = {Path("tenants/scope.py"), Path("tenants/writer.py")}
PATTERN = re.compile(r"\b(corpus_chunk|corpus_term_stats|corpus_audience_stats)\b|\bChunk\.objects\b")


def source_offenders(root: Path, apps: list[str], pattern: re.Pattern[str],
                     allowed: frozenset[Path] | set[Path] = frozenset()) -> list[str]:
    """Lines of product code (not migrations, not tests, not `allowed`) that match `pattern`."""
    offenders = []
    for app in apps:
        for path in sorted((root / app).rglob("*.py")):
            relative = path.relative_to(root)
            if relative in allowed or "migrations" in relative.parts or "tests" in relative.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if pattern.search(line):
                    offenders.append(f"{relative}:{number}: {line.strip()}")
    return offenders


def chunk_table_offenders(root: Path, apps: list[str]) -> list[str]:
    return source_offenders(root, apps, PATTERN, ALLOWED)


def test_only_the_scope_names_the_chunk_table() -> None:
    assert chunk_table_offenders(ROOT, APPS) == []


def test_forced_fail_lint_catches_a_debug_query(tmp_path: Path) -> None:
    (tmp_path / "retrieval").mkdir()
    (tmp_path / "retrieval" / "debug.py").write_text('cursor.execute("SELECT content FROM corpus_chunk")\n')
    assert chunk_table_offenders(tmp_path, ["retrieval"]) == [
        'retrieval/debug.py:1: cursor.execute("SELECT content FROM corpus_chunk")'
    ]


# -- import directions (the shape in /work/shared/design/ARCHITECTURE.md) ----------------------

# Inside answering, each module belongs to the concern its subpackage names. The pipeline and the
# providers below it never reach up into a surface; a surface never reaches sideways into another.
SURFACES = ("answering.api", "answering.chat", "answering.console")
# Inside corpus likewise (docs/decisions/0096): language keys, encoders and parsers are leaves; the
# ingest flow reads them and never a source or a surface; a source calls the flow, never a surface.
CORPUS_SURFACES = ("corpus.api", "corpus.admin")
CORPUS_LEAVES = ("corpus.language", "corpus.encoders", "corpus.parsers")
CORPUS_ABOVE_LEAVES = ("corpus.ingest", "corpus.sources", *CORPUS_SURFACES)
FORBIDDEN = {
    "answering.providers": ("answering.pipeline", *SURFACES),
    "answering.pipeline": SURFACES,
    # The handoff sits under the pipeline and the surfaces: they call it, it calls neither.
    "answering.handoff": ("answering.pipeline", *SURFACES),
    **{surface: tuple(other for other in SURFACES if other != surface) for surface in SURFACES},
    # Between apps: the ground floor imports nothing of ours; lower apps never import upper ones.
    "tenants": ("corpus", "retrieval", "answering", "cachelayer", "evaluation"),
    "corpus": ("retrieval", "answering", "cachelayer", "evaluation"),
    "retrieval": ("answering", "cachelayer", "evaluation"),
    "cachelayer": ("answering", "evaluation"),
    "answering": ("evaluation",),
    **{leaf: tuple(name for name in (*CORPUS_LEAVES, *CORPUS_ABOVE_LEAVES) if name != leaf) for leaf in CORPUS_LEAVES},
    "corpus.ingest": ("corpus.sources", *CORPUS_SURFACES),
    "corpus.sources": CORPUS_SURFACES,
    "corpus.api": ("corpus.admin",),
    "corpus.admin": ("corpus.api",),
}


def _module_name(relative: Path) -> str:
    parts = list(relative.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.Module, module: str, is_package: bool) -> list[tuple[int, str]]:
    """Every module an import names, with `from a import b` also read as `a.b` (b may be a module)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against this module's package
                package = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join([*package, *([base] if base else [])])
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def import_offenders(root: Path, apps: list[str]) -> list[str]:
    offenders: dict[str, str] = {}  # one per import statement: the first name it breaks the rule with
    for app in apps:
        for path in sorted((root / app).rglob("*.py")):
            relative = path.relative_to(root)
            if "migrations" in relative.parts or "tests" in relative.parts:
                continue
            module = _module_name(relative)
            rules = [banned for owner, banned in FORBIDDEN.items() if _within(module, owner)]
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for line, name in _imported(tree, module, path.name == "__init__.py"):
                if any(_within(name, b) for banned in rules for b in banned):
                    offenders.setdefault(f"{relative}:{line}", f"{relative}:{line}: imports {name}")
    return sorted(offenders.values())


def test_imports_follow_the_layers() -> None:
    assert import_offenders(ROOT, APPS) == []


def test_forced_fail_lint_catches_a_pipeline_importing_a_surface(tmp_path: Path) -> None:
    for folder in ("answering/pipeline", "answering/chat", "answering/api"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "answering" / "pipeline" / "flow.py").write_text("from answering.chat.render import answer_html\n")
    (tmp_path / "answering" / "chat" / "views.py").write_text("from answering import api\n")
    (tmp_path / "answering" / "api" / "rest.py").write_text("from answering.pipeline import flow\n")  # allowed
    assert import_offenders(tmp_path, ["answering"]) == [
        "answering/chat/views.py:1: imports answering.api",
        "answering/pipeline/flow.py:1: imports answering.chat.render",
    ]


def test_forced_fail_lint_catches_the_ingest_flow_importing_a_source(tmp_path: Path) -> None:
    for folder in ("corpus/ingest", "corpus/sources", "corpus/language"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "corpus" / "ingest" / "flow.py").write_text("from corpus.sources.jobs import ingest_job_create\n")
    (tmp_path / "corpus" / "language" / "keys.py").write_text("from corpus.ingest import store\n")
    (tmp_path / "corpus" / "sources" / "jobs.py").write_text("from corpus.ingest.flow import ingest_paths\n")  # allowed
    assert import_offenders(tmp_path, ["corpus"]) == [
        "corpus/ingest/flow.py:1: imports corpus.sources.jobs",
        "corpus/language/keys.py:1: imports corpus.ingest",
    ]
