"""No function below the surfaces reads django.conf.settings for behaviour (docs/decisions/0097).

The answer path's behaviour is one typed configuration a surface builds and passes down
(answering/pipeline/config.py), and the ingest's another (corpus/config.py); the `config.py`
modules are the only readers of settings below the surfaces. The other reads left are
resources or deployment facts read where the resource is loaded, each listed with its reason.
A management command, an API module or a task entry point is a surface and may build the
configuration.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BELOW_THE_SURFACES = ["retrieval", "answering/pipeline", "cachelayer", "evaluation", "corpus"]
SURFACES = {"tests", "migrations", "management", "api"}
READERS = {
    Path("retrieval/config.py"): "builds RetrievalConfig: the one place retrieval reads settings",
    Path("answering/pipeline/config.py"): "builds GateConfig, AnswerConfig and the Configuration",
    Path("cachelayer/config.py"): "builds CacheConfig for a direct caller of the cache",
    Path("corpus/config.py"): "builds IngestConfig, ParseLimits and SyncLimits",
}
EXCEPTIONS = {
    Path("retrieval/rerankers/cross_encoder.py"): "RETRIEVAL_CROSS_ENCODER_PATH: the operator's weights, "
                                                  "read once when the backend is built",
    Path("retrieval/rerankers/llm.py"): "RETRIEVAL_LLM_SCORER: the operator's model that grades relevance, "
                                        "read once when the backend is built",
    Path("answering/pipeline/relevance.py"): "ANSWER_PROVIDERS: the model providers the relevance scorer calls",
    Path("evaluation/judge.py"): "ANSWER_JUDGE_PROVIDERS, ANSWER_PROVIDERS: the judge's providers and the "
                                 "generator's, which the judge must not share",
    Path("evaluation/arms.py"): "BASE_DIR, ANSWER_PROVIDERS: where adapted encoders live on this machine, "
                                "and whether a provider exists to run an arm that needs one",
    Path("corpus/encoders/embedding.py"): "EMBEDDING_*: which weights and runtime this machine has, read "
                                          "where the encoder is loaded",
    Path("corpus/encoders/export.py"): "EMBEDDING_EXPORT_DIR, EMBEDDING_MODEL_NAME: where the machine keeps its "
                                       "encoder exports",
    Path("corpus/parsers/__init__.py"): "CORPUS_PARSERS: parsers the operator installed for more file types",
}


def _reads(tree: ast.AST) -> list[tuple[int, str]]:
    """`settings.NAME` and `getattr(settings, ...)`, as code (a docstring naming a setting is no read)."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "settings"
                and node.attr.isupper()):
            found.append((node.lineno, f"settings.{node.attr}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "settings"):
            found.append((node.lineno, "getattr(settings, ...)"))
    return sorted(found)


def settings_readers(root: Path, packages: list[str], allowed: set[Path]) -> list[str]:
    """Reads of settings in product modules of `packages` (not tests, migrations, management
    commands, API modules, or `allowed`)."""
    offenders = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            if relative in allowed or SURFACES & set(relative.parts):
                continue
            for line, read in _reads(ast.parse(path.read_text(encoding="utf-8"))):
                offenders.append(f"{relative}:{line}: {read}")
    return offenders


def test_only_the_configuration_reads_settings_below_the_surfaces() -> None:
    assert settings_readers(ROOT, BELOW_THE_SURFACES, set(READERS) | set(EXCEPTIONS)) == []


def test_every_listed_module_exists_and_still_reads_settings() -> None:
    """An exception whose module no longer reads settings is removed from the list, not kept."""
    for path in [*READERS, *EXCEPTIONS]:
        assert _reads(ast.parse((ROOT / path).read_text(encoding="utf-8"))), f"{path} reads no setting"


def test_forced_fail_lint_catches_a_planted_read(tmp_path: Path) -> None:
    (tmp_path / "retrieval").mkdir()
    (tmp_path / "retrieval" / "planted.py").write_text(
        '"""Reads settings.RETRIEVAL_RERANK_DEPTH (a docstring: not a read)."""\n'
        "from django.conf import settings\n"
        "def depth() -> int:\n"
        "    return settings.RETRIEVAL_RERANK_DEPTH\n"
        "def mode() -> str:\n"
        '    return getattr(settings, "RETRIEVAL_RERANK_MODE")\n'
    )
    (tmp_path / "retrieval" / "config.py").write_text("from django.conf import settings\nX = settings.X\n")
    assert settings_readers(tmp_path, ["retrieval"], {Path("retrieval/config.py")}) == [
        "retrieval/planted.py:4: settings.RETRIEVAL_RERANK_DEPTH",
        "retrieval/planted.py:6: getattr(settings, ...)",
    ]
