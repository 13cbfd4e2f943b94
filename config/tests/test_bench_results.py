"""bench/results/ holds the current result of each benchmark and eval set, not every run ever made.

Issue 46: the folder had grown to 353 files and 81 MB, 85% of everything the history stored.
Git history keeps every report that left it (`git log --oneline -- bench/results/<file>`). A
change that adds reports past the cap fails here: replace the older report of the same set or
benchmark instead of adding beside it.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
CAP_BYTES = 10 * 1024 * 1024


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def over_cap(folder: Path, cap: int = CAP_BYTES) -> str | None:
    size = folder_bytes(folder)
    if size <= cap:
        return None
    largest = sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size, reverse=True)[:5]
    return (f"{folder.name}/ holds {size / 2**20:.1f} MB, over the {cap / 2**20:.0f} MB cap; largest: "
            + ", ".join(f"{p.name} ({p.stat().st_size / 2**20:.1f} MB)" for p in largest))


def test_bench_results_stays_under_ten_megabytes() -> None:
    assert over_cap(RESULTS) is None


def test_forced_fail_a_folder_past_the_cap_is_named_with_its_largest_files(tmp_path: Path) -> None:
    (tmp_path / "eval-big.json").write_bytes(b"x" * 3000)
    (tmp_path / "small.json").write_bytes(b"x" * 10)
    assert over_cap(tmp_path, cap=4000) is None
    (tmp_path / "eval-bigger.json").write_bytes(b"x" * 2000)
    message = over_cap(tmp_path, cap=4000)
    assert message is not None and "eval-big.json" in message and "eval-bigger.json" in message
