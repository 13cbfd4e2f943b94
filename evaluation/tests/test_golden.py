from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.golden import GoldenError, load_golden
from evaluation.locators import ChunkInfo, matches, resolve
from evaluation.metrics import first_hit_rank, ndcg_at, precision_recall, recall_at, reciprocal_rank

SHARED = Path(__file__).resolve().parents[1] / "golden" / "pgdocs-dev.yaml"


def test_the_shared_developer_set_loads() -> None:
    golden = load_golden(SHARED)
    assert golden.tenant == "pgdocs" and len(golden.cases) == 30
    assert {c.type for c in golden.cases} == {"normal", "multi_turn", "must_abstain"}


@pytest.mark.parametrize(("body", "message"), [
    ("cases: []", "missing top-level tenant"),
    ("tenant: t\ncases:\n  - {id: a, question: q, type: weird}", "type 'weird'"),
    ("tenant: t\ncases:\n  - {id: a, question: q}\n  - {id: a, question: q2, expected: [{slug: x}]}", "needs expected"),
    ("tenant: t\ncases:\n  - {id: a, question: q, expected: [{source: wiki, slug: x}]}", "source 'wiki'"),
    ("tenant: t\ncases:\n  - {id: a, question: q, expected: [{slug: x}]}\n  - {id: a, question: q, expected: [{slug: x}]}",
     "duplicate id"),
    ("[unclosed", "cannot read"),
])
def test_bad_sets_fail_with_a_clear_error(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(body)
    with pytest.raises(GoldenError, match=message):
        load_golden(path)


def test_locators_resolve_and_a_dead_locator_is_an_error_not_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text("tenant: t\ncases:\n"
                    "  - {id: a, question: q, expected: [{slug: billing/invoices, heading: proration}]}\n"
                    "  - {id: b, question: q, expected: [{source: changelog, id: CL-9}]}\n"
                    "  - {id: c, question: q, expected: [{source: pdf, slug: manual, page: 2}]}\n")
    chunks = {
        1: ChunkInfo(1, "doc", "billing/invoices", "Invoices > Proration", None, False),
        2: ChunkInfo(2, "doc", "billing/invoices", "Invoices > Refunds", None, False),
        3: ChunkInfo(3, "pdf", "manual", "Manual > Page 2", 2, False),
    }
    relevant, errors = resolve(load_golden(path), chunks)
    assert relevant == {"a": {1}, "b": set(), "c": {3}}
    assert errors == ["b: locator changelog:CL-9 resolves to no chunk"]
    locator = load_golden(path).cases[0].expected[0]
    assert matches(locator, chunks[2], page_level=True) and not matches(locator, chunks[2])


def test_metrics() -> None:
    assert first_hit_rank([5, 7, 9], {9, 1}) == 3
    assert recall_at(3, 3) == 1.0 and recall_at(3, 1) == 0.0 and recall_at(None, 10) == 0.0
    assert reciprocal_rank(4) == 0.25 and ndcg_at(1) == 1.0 and ndcg_at(11) == 0.0
    assert precision_recall([True, True, False], [True, False, True]) == (0.5, 0.5)
    assert precision_recall([False], [False]) == (None, None)
