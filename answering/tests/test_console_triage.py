"""Feedback triage: one test per category, and the order cache → stale → retrieval → generation → unclear."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from answering.tests.console_data import candidate, trace_make
from answering.console.triage import triage_counts, triage_traces, trace_triage
from corpus.ingest import store
from corpus.ingest.flow import ingest_paths
from corpus.models import Document
from tenants.rls import rls_transaction

pytestmark = pytest.mark.django_db


@pytest.fixture
def documents(acme: Any, tmp_path: Path) -> dict[str, int]:
    """Three real documents of acme: one stays live, one gets archived, one superseded."""
    for slug, text in (("live", "Refunds are paid within five days."), ("old", "Refunds took ten days in 2023."),
                       ("new", "Refunds are paid within three days.")):
        (tmp_path / f"{slug}.md").write_text(f"# {slug.title()}\n\n{text}\n")
    report = ingest_paths(tenant=acme.tenant, paths=[tmp_path], audience="public")
    assert report.added == 3, report.summary()
    with rls_transaction(tenant_id=acme.tenant.id, all_audiences=True):
        ids = dict(Document.objects.filter(tenant=acme.tenant).values_list("slug", "id"))
    return ids


def cite(document_id: int) -> list[dict[str, Any]]:
    return [{"number": 1, "chunk_id": 1, "document_id": document_id, "slug": "x", "title": "X",
             "source_type": "doc", "heading_path": "", "page": None, "snippet": "", "effective_date": None}]


def test_cache_hit_is_cache_even_when_everything_else_is_wrong_too(acme: Any, documents: dict[str, int]) -> None:
    store.archive_documents(tenant=acme.tenant, document_ids=[documents["old"]])
    trace = trace_make(acme.tenant, cache_hit=True, feedback=-1, citations=cite(documents["old"]),
                       weak_claims=["x"])
    assert trace_triage(trace).category == "cache"


def test_archived_source_is_stale_data_before_weak_retrieval(acme: Any, documents: dict[str, int]) -> None:
    trace = trace_make(acme.tenant, feedback=-1, citations=cite(documents["old"]), score=0.06)  # barely passed
    assert trace_triage(trace).category == "retrieval"  # while the source is live
    store.archive_documents(tenant=acme.tenant, document_ids=[documents["old"]])
    result = trace_triage(trace)
    assert result.category == "stale_data" and "archived" in result.reason


def test_superseded_source_is_stale_data(acme: Any, documents: dict[str, int]) -> None:
    trace = trace_make(acme.tenant, feedback=-1, citations=cite(documents["old"]))
    store.archive_documents(tenant=acme.tenant, document_ids=[documents["old"]], superseded_by=documents["new"])
    result = trace_triage(trace)
    assert result.category == "stale_data" and "superseded" in result.reason


def test_source_reingested_after_the_answer_is_stale_data(acme: Any, documents: dict[str, int],
                                                          tmp_path: Path) -> None:
    trace = trace_make(acme.tenant, feedback=-1, citations=cite(documents["live"]))
    assert trace_triage(trace).category == "generation"
    (tmp_path / "live.md").write_text("# Live\n\nRefunds are paid within two days now.\n")
    assert ingest_paths(tenant=acme.tenant, paths=[tmp_path], audience="public").changed == 1
    result = trace_triage(trace)
    assert result.category == "stale_data" and "re-ingested" in result.reason


def test_deleted_source_is_stale_data(acme: Any) -> None:
    trace = trace_make(acme.tenant, feedback=-1, citations=cite(987654321))
    assert trace_triage(trace).category == "stale_data"


@pytest.mark.parametrize("kwargs", [
    {"passed": False, "action": "escalated", "score": 0.01},  # the gate failed
    {"score": 0.07},  # passed by less than the rerank margin
    {"score": 0.016, "score_kind": "fusion"},  # one leg's top hit only: below the fusion margin
    {"candidates": []},  # nothing found
], ids=["gate-failed", "barely-passed-rerank", "barely-passed-fusion", "no-candidates"])
def test_weak_retrieval_is_retrieval(acme: Any, documents: dict[str, int], kwargs: dict[str, Any]) -> None:
    trace = trace_make(acme.tenant, feedback=-1, citations=cite(documents["live"]), **kwargs)
    assert trace_triage(trace).category == "retrieval"


def test_weak_retrieval_wins_over_weak_claims(acme: Any, documents: dict[str, int]) -> None:
    trace = trace_make(acme.tenant, feedback=-1, citations=cite(documents["live"]), score=0.06, weak_claims=["x"])
    assert trace_triage(trace).category == "retrieval"


def test_good_retrieval_voted_down_is_generation(acme: Any, documents: dict[str, int]) -> None:
    trace = trace_make(acme.tenant, feedback=-1, citations=cite(documents["live"]), score=0.9)
    assert trace_triage(trace).category == "generation"


def test_weak_claims_are_generation_even_with_an_upvote(acme: Any, documents: dict[str, int]) -> None:
    trace = trace_make(acme.tenant, feedback=1, citations=cite(documents["live"]), weak_claims=["a claim"])
    result = trace_triage(trace)
    assert result.category == "generation" and "1 claim" in result.reason


def test_model_declining_after_a_good_gate_is_generation(acme: Any) -> None:
    trace = trace_make(acme.tenant, action="escalated", feedback=-1, score=0.9)
    assert trace_triage(trace).category == "generation"


def test_healthy_upvoted_answer_is_unclear(acme: Any, documents: dict[str, int]) -> None:
    trace = trace_make(acme.tenant, feedback=1, citations=cite(documents["live"]), score=0.9,
                       candidates=[candidate("live", rerank=0.9)])
    assert trace_triage(trace).category == "unclear"


def test_counts_over_many_traces(acme: Any, documents: dict[str, int]) -> None:
    traces = [
        trace_make(acme.tenant, cache_hit=True, feedback=-1),
        trace_make(acme.tenant, feedback=-1, score=0.06),
        trace_make(acme.tenant, feedback=-1, score=0.9, citations=cite(documents["live"])),
        trace_make(acme.tenant, feedback=1, score=0.9, citations=cite(documents["live"])),
    ]
    assert [r.category for r in triage_traces(traces=traces).values()] == ["cache", "retrieval", "generation",
                                                                           "unclear"]
    assert triage_counts(traces=traces) == {"cache": 1, "stale_data": 0, "retrieval": 1, "generation": 1,
                                            "unclear": 1}
