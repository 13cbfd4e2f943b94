"""Keys of a language PostgreSQL cannot stem (corpus/language/keys.py): what each word becomes.
No database: these are the pure functions ingest and questions share."""

from __future__ import annotations

import pytest

from corpus.language.czech_stem import light_stem
from corpus.language.keys import document_keys, fold, question_keys, scheme_for


@pytest.mark.parametrize("word, stem", [("lišce", "lišk"), ("liška", "lišk"), ("pavlovi", "pavl"),
                                        ("pavlač", "pavlač"), ("pesto", "pest"), ("pes", "pes")])
def test_light_stem(word: str, stem: str) -> None:
    assert light_stem(word) == stem


def test_english_keeps_its_postgresql_configuration() -> None:
    assert scheme_for("en") == "simple"
    assert document_keys("The dog barks", language="en") is None


def test_czech_question_keys_carry_lemma_stem_and_folded_forms() -> None:
    (psa,) = question_keys("psa", language="cs")
    assert [(k.key, k.weight) for k in psa] == [("pes", 1.0), ("~s:psa", 1.0), ("~f:pes", 0.5), ("~g:psa", 0.5)]
    # A word the dictionary does not know falls back on its prefix, at half weight.
    (pesto,) = question_keys("pesto", language="cs")
    assert ("~p:pest", 0.5) in [(k.key, k.weight) for k in pesto]
    # Stop words are no key; a word asked twice is one group.
    assert len(question_keys("Jak se platí za psa a za psa?", language="cs")) == 2


def test_document_keys_are_a_tsvector_with_positions() -> None:
    keys = document_keys("Psovi dáváme granule; psa venčíme.", language="cs")
    assert keys is not None and "'pes':1,4" in keys and "'~f:davat':2" in keys


def test_folding() -> None:
    assert fold("Příliš žluťoučký kůň") == "Prilis zlutoucky kun"
    assert scheme_for("cs") == "lemma"
