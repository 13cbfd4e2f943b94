"""Issue 46 item 4: mypy runs in `make test` (mypy.ini, docs/decisions/0095), and an ignore it
is told to skip says which error and why: `# type: ignore[code]  # reason`. mypy itself refuses
an ignore that no longer silences anything (warn_unused_ignores); this refuses a bare one."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IGNORE = re.compile(r"#\s*type:\s*ignore\b(?P<rest>.*)$")
NAMED = re.compile(r"^\[[a-z-]+(?:, *[a-z-]+)*\]  # \S")


def checked_files() -> list[Path]:
    config = configparser.ConfigParser()
    config.read(ROOT / "mypy.ini")
    found: list[Path] = []
    for entry in (e.strip() for e in config["mypy"]["files"].split(",")):
        path = ROOT / entry
        found.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return [p for p in found if "migrations" not in p.parts]


def bare_ignores(files: list[Path], root: Path = ROOT) -> list[str]:
    bare = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = IGNORE.search(line)
            if match and not NAMED.match(match["rest"].strip()):
                bare.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return bare


def test_mypy_checks_the_product_apps_strictly() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "mypy.ini")
    files = {e.strip() for e in config["mypy"]["files"].split(",")}
    assert {"tenants", "corpus", "retrieval", "answering", "evaluation", "cachelayer", "config"} <= files
    for option in ("disallow_untyped_defs", "check_untyped_defs", "warn_unused_ignores", "warn_redundant_casts",
                   "no_implicit_optional", "strict_equality"):
        assert config["mypy"].getboolean(option), option


def test_every_type_ignore_names_its_error_code_and_its_reason() -> None:
    files = checked_files()
    assert len(files) > 300
    assert bare_ignores(files) == []


def test_the_check_fails_on_a_bare_ignore(tmp_path: Path) -> None:
    """Forced fail: an ignore without a code, and one with a code but no reason, are both reported."""
    ignore = "# type" + ": ignore"  # split, so this file holds no ignore of its own
    planted = tmp_path / "planted.py"
    planted.write_text(f"x: int = 'a'  {ignore}\ny: int = 'b'  {ignore}[assignment]\n"
                       f"z: int = 'c'  {ignore}[assignment]  # a reason\n")
    assert [line.split(":")[1] for line in bare_ignores([planted], root=tmp_path)] == ["1", "2"]
