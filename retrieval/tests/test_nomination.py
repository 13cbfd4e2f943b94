"""Which query terms nominate keyword candidates (pure function: no database)."""

from __future__ import annotations

from retrieval.legs import nomination_query


def test_rarest_terms_nominate_up_to_the_budget() -> None:
    df = {"vacuum": 300, "freez": 500, "tabl": 4000, "row": 6000}
    # 300 + 500 fit a budget of 1,000; tabl and row are common and hold together too often.
    assert nomination_query(list(df), df, budget=1000, chunks=12000) == "'vacuum' | 'freez'"


def test_two_common_terms_nominate_together_when_their_pair_fits() -> None:
    df = {"insert": 1400, "updat": 1200, "alreadi": 700, "row": 6000}
    # alreadi fits; insert x updat / 12,000 ≈ 140 chunks expected together: the pair nominates.
    assert nomination_query(list(df), df, budget=1500, chunks=12000) == "'alreadi' | ('updat' & 'insert')"


def test_a_pair_that_would_undo_the_budget_does_not_nominate() -> None:
    df = {"rare": 10, "the": 11000, "to": 10500}
    assert nomination_query(list(df), df, budget=1500, chunks=12000) == "'rare'"


def test_when_every_term_is_over_budget_the_rarest_nominate_together() -> None:
    df = {"tabl": 3000, "column": 2500, "row": 6000}
    # 2,500 x 3,000 / 12,000 = 625 chunks expected to hold both: two terms are enough.
    assert nomination_query(list(df), df, budget=1500, chunks=12000) == "('column' & 'tabl')"
    df = {"the": 11000, "to": 10500, "is": 9000}
    # 9,000 x 10,500 / 12,000 = 7,875, x 11,000 / 12,000 = 7,219: all three, and still over.
    assert nomination_query(list(df), df, budget=1500, chunks=12000) == "'is' & 'to' & 'the'"
    assert nomination_query(["the"], df, budget=1500, chunks=12000) == "'the'"


def test_ties_are_broken_by_the_term_so_the_query_is_deterministic() -> None:
    df = {"b": 5, "a": 5}
    assert nomination_query(["b", "a"], df, budget=100, chunks=1000) == "'a' | 'b'"


def test_quotes_in_terms_are_escaped() -> None:
    assert nomination_query(["o'brien"], {"o'brien": 1}, budget=10, chunks=10) == "'o''brien'"
