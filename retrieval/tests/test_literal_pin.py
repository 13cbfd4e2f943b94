"""Rare quoted identifiers join the top below the scorer's best (docs/decisions/0059)."""

from __future__ import annotations

import pytest

from retrieval.legs import Bm25Stats, QueryTerms
from retrieval.search import Candidate, SearchResult, pin_rare_literals, search
from retrieval.tests.conftest import RetrievalWorld
from tenants.scope import TenantScope


def candidate(chunk_id: int, matched: list[str], margin: float = 0.1) -> Candidate:
    return Candidate(chunk_id=chunk_id, document_id=chunk_id, slug=f"doc-{chunk_id}", title="", source_type="doc",
                     heading_path="", content="", page=None, version="", effective_date=None, contested=False,
                     fused_score=0.0, ranks={}, vector_similarity=0.0, keyword_coverage=0.0, matched_terms=matched,
                     vector_margin=margin)


TERMS = QueryTerms(lexemes=("sqlstat", "mean"), exact=("=23505",))


def stats(df: int) -> Bm25Stats:
    return Bm25Stats(idf={}, df={"=23505": df, "sqlstat": 40, "mean": 900}, chunk_count=10_000, avg_length=100.0)


def order(candidates: list[Candidate]) -> list[int]:
    return [c.chunk_id for c in candidates]


def test_a_rare_literal_moves_below_the_first_candidate_and_the_rest_keep_their_order() -> None:
    ranked = [candidate(1, ["sqlstat"]), candidate(2, ["mean"]), candidate(3, ["sqlstat"]),
              candidate(4, ["=23505", "sqlstat"]), candidate(5, [])]
    pinned = pin_rare_literals(ranked, TERMS, stats(df=2), max_df=3)
    assert order(pinned) == [1, 4, 2, 3, 5]
    # The trace names the chunk the pin moved.
    assert [c.as_trace()["pinned"] for c in pinned] == [False, True, False, False, False]


def test_the_first_candidate_is_never_displaced_so_the_gate_reads_the_scorer_it_was_fitted_on() -> None:
    ranked = [candidate(1, []), candidate(2, ["=23505"]), candidate(3, ["=23505"])]
    assert order(pin_rare_literals(ranked, TERMS, stats(df=2), max_df=3)) == [1, 2, 3]
    first_holds_it = [candidate(1, ["=23505"]), candidate(2, []), candidate(3, ["=23505"])]
    assert order(pin_rare_literals(first_holds_it, TERMS, stats(df=2), max_df=3)) == [1, 3, 2]


def test_a_chunk_no_closer_than_chance_holds_the_literal_by_coincidence() -> None:
    """`7000` asked as a port, held by a GeoDjango distance example (dj-026)."""
    ranked = [candidate(1, []), candidate(2, []), candidate(3, ["=23505"], margin=-0.04),
              candidate(4, ["=23505"], margin=0.18)]
    assert order(pin_rare_literals(ranked, TERMS, stats(df=2), max_df=3)) == [1, 4, 2, 3]


@pytest.mark.parametrize("df,max_df", [(4, 3), (0, 3), (2, 0)])
def test_a_common_or_absent_literal_or_the_setting_off_changes_nothing(df: int, max_df: int) -> None:
    ranked = [candidate(1, []), candidate(2, []), candidate(3, ["=23505"])]
    assert order(pin_rare_literals(ranked, TERMS, stats(df=df), max_df=max_df)) == [1, 2, 3]


def test_plain_and_hyphenated_words_are_never_pinned_however_rare() -> None:
    ranked = [candidate(1, []), candidate(2, []), candidate(3, ["sqlstat", "=full-text"])]
    rare_words = Bm25Stats(idf={}, df={"sqlstat": 1, "=full-text": 1}, chunk_count=10_000, avg_length=100.0)
    hyphenated = QueryTerms(lexemes=("sqlstat",), exact=("=full-text",))
    assert order(pin_rare_literals(ranked, hyphenated, rare_words, max_df=3)) == [1, 2, 3]


@pytest.mark.parametrize("literal", ["=work_mem", "=os.path.join", "=e1043"])
def test_names_with_an_underscore_a_dot_or_a_digit_are_literals(literal: str) -> None:
    ranked = [candidate(1, []), candidate(2, []), candidate(3, [literal])]
    rare = Bm25Stats(idf={}, df={literal: 1}, chunk_count=10_000, avg_length=100.0)
    assert order(pin_rare_literals(ranked, QueryTerms(lexemes=(), exact=(literal,)), rare, max_df=3)) == [1, 3, 2]


@pytest.mark.django_db
def test_search_pins_the_chunk_that_holds_a_quoted_code(retrieval_world: RetrievalWorld,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    scope = TenantScope(tenant_id=retrieval_world.acme.tenant.id, audience_ids=(retrieval_world.acme.public_id,))
    question = "my webhook retries stop and the log says E1043"
    pinned = search(scope=scope, query=question, ts_config="english", k=5)
    monkeypatch.setattr("retrieval.search.LITERAL_PIN_MAX_DF", 0)  # the control: no pin
    plain = search(scope=scope, query=question, ts_config="english", k=5)

    def first_holder(result: SearchResult) -> int:
        held = [i for i, c in enumerate(result.candidates) if "=e1043" in c.matched_terms]
        return held[0] if held else 99

    assert first_holder(pinned) <= 1 < first_holder(plain)
