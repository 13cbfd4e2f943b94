"""Keys of a language PostgreSQL cannot stem (corpus/language/keys.py): what each word becomes.
No database: these are the pure functions ingest and questions share."""

from __future__ import annotations

import pytest

from corpus.language import keys
from corpus.language.czech_stem import light_stem
from corpus.language.keys import document_keys, fold, index_keys_version, question_keys, scheme_for


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


# Czech keys byte for byte as they were when Slovak joined (docs/decisions/0125): stored Czech
# chunks are only keyed again when `cs`'s version changes, so a change here without that bump
# leaves every Czech tenant with keys its questions no longer compute.
PINNED_CZECH_SENTENCE = "Psovi dáváme granule; lišce v pohádce Pavlovi nesmíme dát pesto."
PINNED_CZECH_DOCUMENT = (
    "'pes':1 '~s:psov':1 '~f:pes':1 '~g:psov':1 '~p:psov':1 'dávat':2 '~s:dávám':2 '~f:davat':2 '~g:davam':2"
    " '~p:dava':2 'granule':3 '~s:granul':3 '~f:granule':3 '~g:granul':3 '~p:gran':3 'liška':4 '~s:lišk':4"
    " '~f:liska':4 '~g:lisk':4 '~p:lisc':4 'pohádka':6 '~s:pohádk':6 '~f:pohadka':6 '~g:pohadk':6 '~p:poha':6"
    " 'pavel':7 '~s:pavl':7 '~f:pavel':7 '~g:pavl':7 '~p:pavl':7 'smět':8 '~s:nesmím':8 '~f:smet':8"
    " '~g:nesmim':8 '~p:nesm':8 'dát':9 '~s:dát':9 '~f:dat':9 '~g:dat':9 '~p:dat':9 'pesto':10 '~s:pest':10"
    " '~f:pesto':10 '~g:pest':10 '~p:pest':10"
)
PINNED_CZECH_QUESTION = [
    [("stát", 1.0), ("~s:stoj", 1.0), ("~f:stat", 0.5), ("~g:stoj", 0.5)],
    [("krmení", 1.0), ("~s:krmen", 1.0), ("~f:krmeni", 0.5), ("~g:krmen", 0.5), ("~p:krme", 0.5)],
    [("pes", 1.0), ("~s:psa", 1.0), ("~f:pes", 0.5), ("~g:psa", 0.5)],
    [("diakritika", 1.0), ("~s:diakritik", 1.0), ("~f:diakritika", 0.5), ("~g:diakritik", 0.5)],
    [("liska", 1.0), ("~s:lisk", 1.0), ("~f:liska", 0.5), ("~g:lisk", 0.5), ("~p:lisk", 0.5)],
]


def test_czech_keys_are_pinned_with_their_version() -> None:
    assert document_keys(PINNED_CZECH_SENTENCE, language="cs") == PINNED_CZECH_DOCUMENT
    asked = question_keys("Kolik stojí krmení pro psa bez diakritiky, liska?", language="cs")
    assert [[(k.key, k.weight) for k in group] for group in asked] == PINNED_CZECH_QUESTION
    assert index_keys_version("cs") == "|keys:cs-lemma-1"
    assert index_keys_version("en") == ""  # English adds nothing to the ingest fingerprint


def test_slovak_keys_are_the_lemma_folded_and_the_prefix_fallback_without_a_stem() -> None:
    """docs/decisions/0125: Slovak is keyed by its own dictionary and stop words, and by no stemmer
    (the Czech one's palatalisation cuts Slovak `váze`, a vase, to `váh`, the stem of `váha`)."""
    assert scheme_for("sk") == "lemma"
    (psa,) = question_keys("psa", language="sk")
    assert [(k.key, k.weight) for k in psa] == [("pes", 1.0), ("~f:pes", 0.5)]
    (vase,) = question_keys("váze", language="sk")
    assert [k.key for k in vase] == ["váza", "~f:vaza"]
    # A word the Slovak dictionary does not know falls back on its prefix, at half weight.
    (unknown,) = question_keys("pelíšok", language="sk")
    assert [(k.key, k.weight) for k in unknown] == [("pelíšok", 1.0), ("~f:pelisok", 0.5), ("~p:peli", 0.5)]
    # Slovak scaffolding is no key: `koľko`, `môžem` (môcť) and `máte` (mať) are stop words.
    assert [g[0].key for g in question_keys("Koľko stojí doprava? Môžem? Máte?", language="sk")] == ["stáť", "doprava"]
    assert document_keys("Psovi dávame granule.", language="sk") == (
        "'pes':1 '~f:pes':1 '~p:psov':1 'dávať':2 '~f:davat':2 '~p:dava':2 'granula':3 '~f:granula':3 '~p:gran':3")


def test_a_new_keyed_language_changes_only_its_own_fingerprint() -> None:
    """Slovak chunks stored before Slovak was keyed (fingerprint without keys) are keyed again;
    Czech and English fingerprints are the ones pinned above."""
    assert index_keys_version("sk") == "|keys:sk-lemma-1"
    assert index_keys_version("cs") == "|keys:cs-lemma-1" and index_keys_version("en") == ""


def test_without_a_dictionary_every_word_keys_as_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """A keyed language simplemma has no dictionary for (Belarusian stands in for one): each word
    is its own lemma, unknown, so a question reaches its inflections by the prefix alone."""
    monkeypatch.setitem(keys.KEYED_LANGUAGES, "be", keys.KeyedLanguage(version="1", stop=frozenset()))
    assert not keys.has_dictionary("be")
    assert keys.dictionary_lemma("Кнігу", "be") == ("кнігу", False)
    (book,) = question_keys("кнігу", language="be")
    assert [(k.key, k.weight) for k in book] == [("кнігу", 1.0), ("~f:кнігу", 0.5), ("~p:кніг", 0.5)]
    assert "'~p:кніг':1" in (document_keys("Кнігі", language="be") or "")


def test_scaffolding_typed_without_diacritics_is_a_stop_word_of_the_question_only() -> None:
    """Issue 49 item 3: `Musim` and `Muzete` are words the dictionary does not know whose folded
    form is a stop word's (muset, moci). A question drops them; a document keeps its stored keys
    (the Czech version is unchanged). `Mate` is a word of its own to the dictionary (mást) and
    stays a key: the rule reads only unknown words, so `byt` (a flat) is never `být`."""
    assert [g[0].key for g in question_keys("Musim se registrovat? Muzete? Mate prodejnu?", language="cs")] == [
        "registrovat", "mást", "prodejna"]
    assert [g[0].key for g in question_keys("Mozem vratit tovar?", language="sk")] == ["vratit", "tovar"]
    assert document_keys("Musim", language="cs") == "'musim':1 '~s:musim':1 '~f:musim':1 '~g:musim':1 '~p:musi':1"
