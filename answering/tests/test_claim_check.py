"""The citation check reads the cited chunks' stored vectors instead of encoding their text again
(docs/decisions/0127): the same similarity, one scope read, and a chunk whose stored vector
encodes more than its text (a context blurb) or another encoder's is encoded as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from answering.pipeline.citations import CitedAnswer, Source, check_claims_by_similarity, stored_vectors
from conftest import Cast
from corpus.encoders.embedding import get_encoder
from corpus.tests.helpers import texts_encoded
from retrieval.search import Candidate, search
from retrieval.tests.test_token_states import ingest, public, rows

WINDOW = "Refunds are issued within 14 days of a purchase."


def _context(cast: Cast, question: str) -> list[Candidate]:
    return search(scope=public(cast), query=question, ts_config="english").candidates


def _cited(candidate: Candidate, text: str) -> CitedAnswer:
    source = Source(chunk_id=candidate.chunk_id, document_id=candidate.document_id, slug=candidate.slug,
                    title=candidate.title, source_type=candidate.source_type, heading_path=candidate.heading_path,
                    number=1, page=None, snippet="", effective_date=None)
    return CitedAnswer(text=text, sources=[source])


def _encoded(monkeypatch: Any) -> list[str]:
    """What the citation check hands the encoder (`encode`: claims, and chunks without a usable
    stored vector)."""
    return texts_encoded(monkeypatch, get_encoder(), ("encode",))


@pytest.mark.django_db
def test_a_claim_is_compared_with_the_stored_vector_of_the_chunk_it_cites(
        acme: Cast, tmp_path: Path, monkeypatch: Any) -> None:
    ingest(acme, tmp_path / "docs")
    refunds = next(c for c in _context(acme, "how long do refunds take") if c.slug == "refunds")
    stored = stored_vectors(public(acme), [refunds.chunk_id])[refunds.chunk_id]
    assert float(stored @ get_encoder().encode([refunds.content])[0]) > 0.99  # what encoding again gives
    seen = _encoded(monkeypatch)
    answer = _cited(refunds, f"{WINDOW} [1] The quokkaline pager pages the duty manager at night. [1]")
    with CaptureQueriesContext(connection) as captured:
        checks = check_claims_by_similarity(answer, [refunds], scope=public(acme), min_similarity=0.5)
    assert refunds.content not in seen and seen == [WINDOW, "The quokkaline pager pages the duty manager at night."]
    reads = [q["sql"] for q in captured.captured_queries if "corpus_chunk" in q["sql"]]
    assert len(reads) == 1, reads  # one scope read for every cited chunk
    assert [c.weak for c in checks] == [False, True], checks
    assert checks[0].similarity == pytest.approx(float(get_encoder().encode([WINDOW])[0] @ stored), abs=1e-3)


@pytest.mark.django_db
def test_a_chunk_embedded_after_a_blurb_is_encoded_from_its_text(
        acme: Cast, tmp_path: Path, settings: Any, monkeypatch: Any) -> None:
    settings.CORPUS_CONTEXTUALIZER = "corpus.tests.test_ingest.fake_contextualizer"
    ingest(acme, tmp_path / "blurbed", {"pricing.md": "# Pricing\n\n## Plans\n\nThe starter plan costs $12.\n"})
    assert rows(acme)["pricing"]["context_blurb"]
    pricing = next(c for c in _context(acme, "what does the starter plan cost") if c.slug == "pricing")
    assert stored_vectors(public(acme), [pricing.chunk_id]) == {}
    seen = _encoded(monkeypatch)
    checks = check_claims_by_similarity(_cited(pricing, "The starter plan costs $12. [1]"), [pricing],
                                        scope=public(acme), min_similarity=0.5)
    assert pricing.content in seen and not checks[0].weak


@pytest.mark.django_db
def test_another_encoders_vector_is_not_read(acme: Cast, tmp_path: Path, monkeypatch: Any) -> None:
    ingest(acme, tmp_path / "docs")
    refunds = next(c for c in _context(acme, "how long do refunds take") if c.slug == "refunds")
    monkeypatch.setattr(type(get_encoder()), "identity", property(lambda self: "another-model:onnx"))
    assert stored_vectors(public(acme), [refunds.chunk_id]) == {}


@pytest.mark.django_db
def test_a_chunk_outside_the_readers_audiences_is_not_read(acme: Cast, tmp_path: Path) -> None:
    ingest(acme, tmp_path / "docs")
    chunks = rows(acme)  # every audience's
    read = stored_vectors(public(acme), [int(r["id"]) for r in chunks.values()])
    assert set(read) == {int(r["id"]) for slug, r in chunks.items() if slug != "runbook"}  # the runbook is internal
