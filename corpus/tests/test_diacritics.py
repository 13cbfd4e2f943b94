"""A Czech question typed without diacritics is written again with them before it is searched
(docs/decisions/0114): the dictionary proposes the forms, the tenant's pages choose."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import Cast, czech_cast
from corpus.language.diacritics import folding_pattern, restore_diacritics
from corpus.language.keys import fold
from retrieval.search import search
from tenants.scope import TenantScope


def held(*lemmas: str) -> Any:
    def frequency(asked: Sequence[str]) -> Mapping[str, int]:
        return {lemma: 3 for lemma in asked if lemma in lemmas}
    return frequency


def test_each_unknown_bare_word_gets_the_form_whose_lemma_the_pages_hold() -> None:
    restored = restore_diacritics("kolik volneho mista mam na disku", language="cs",
                                  lemma_frequency=held("volný", "místo", "disk"))
    assert restored == "kolik volného místa mam na disku"


def test_the_pages_choose_between_forms_that_fold_alike() -> None:
    """"sit" folds from síť (a network), sít (of síto, a sieve) and šít (to sew)."""
    assert restore_diacritics("nejde mi sit", language="cs", lemma_frequency=held("síť")) == "nejde mi síť"
    assert restore_diacritics("nejde mi sit", language="cs", lemma_frequency=held("šít")) == "nejde mi šít"


def test_a_word_no_page_explains_stays_as_typed() -> None:
    assert restore_diacritics("kolik volneho mista", language="cs", lemma_frequency=held()) == "kolik volneho mista"


def vocabulary(**terms: int) -> Any:
    """A tenant's terms (term → chunks holding it), matched as PostgreSQL's `~` would."""
    def matching(pattern: str) -> Mapping[str, int]:
        return {term: df for term, df in terms.items() if re.search(pattern, term)}
    return matching


def test_a_word_the_dictionary_lacks_takes_the_tenants_own_spelling() -> None:
    """dobírka is not in simplemma's Czech; the tenant's pages spell it (docs/decisions/0135)."""
    pages = vocabulary(**{"dobírku": 3, "dobírka": 2, "připlácí": 1, "~f:dobirku": 3})
    assert restore_diacritics("kolik se priplaci za dobirku", language="cs", lemma_frequency=held(),
                              terms_matching=pages) == "kolik se připlácí za dobírku"
    assert restore_diacritics("Dobirku", language="cs", lemma_frequency=held(),
                              terms_matching=pages) == "Dobírku"


def test_a_word_the_tenant_writes_bare_or_never_stays_as_typed() -> None:
    assert restore_diacritics("plati dobirku", language="cs", lemma_frequency=held(),
                              terms_matching=vocabulary(dobirku=1, dobírku=5)) == "plati dobirku"
    assert restore_diacritics("plati dobirku", language="cs", lemma_frequency=held(),
                              terms_matching=vocabulary(dobírka=5)) == "plati dobirku"
    # Under four letters the vocabulary is not asked: too many words fold alike.
    assert restore_diacritics("kde je ddt", language="cs", lemma_frequency=held(),
                              terms_matching=vocabulary(**{"ďďť": 9})) == "kde je ddt"


def test_a_question_of_many_unknown_words_reads_no_vocabulary() -> None:
    """Noise, not a question typed without accents: no expression of hundreds of words is built."""
    asked: list[str] = []

    def matching(pattern: str) -> Mapping[str, int]:
        asked.append(pattern)
        return {}
    invented = " ".join(f"zqx{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(9))
    assert restore_diacritics(invented, language="cs", lemma_frequency=held(), terms_matching=matching) == invented
    assert asked == []
    restore_diacritics(" ".join(invented.split()[:8]), language="cs", lemma_frequency=held(), terms_matching=matching)
    assert len(asked) == 1


def test_the_folding_pattern_matches_exactly_the_spellings_that_fold_to_the_word() -> None:
    pattern = folding_pattern(["dobirku", "bezdratovy"])
    spellings = ["dobírku", "dobirku", "bezdrátový", "bezdratový", "dobírka", "dobírkou", "xdobírku",
                 "bezdrátovým", "~f:dobirku", "dóbírků"]
    assert [s for s in spellings if re.search(pattern, s)] == [
        s for s in spellings if fold(s) in ("dobirku", "bezdratovy")]


def test_a_question_with_any_diacritic_or_in_english_is_left_alone() -> None:
    every = held("volný", "místo")
    assert restore_diacritics("kolik volneho místa", language="cs", lemma_frequency=every) == "kolik volneho místa"
    assert restore_diacritics("volneho mista", language="en", lemma_frequency=every) == "volneho mista"


@pytest.fixture(scope="module")
def disk_help(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Cast:
    with django_db_blocker.unblock():
        root: Path = tmp_path_factory.mktemp("disk")
        return czech_cast("cs-diacritics", root=root, pages={
            "disk.md": "# Kontrola volného místa na disku\n\nKolik volného místa na disku zbývá, "
                       "zjistíte v aplikaci Analyzátor využití disku.\n",
            "tisk.md": "# Tisk\n\nVýchozí tiskárnu nastavíte v Nastavení v části Tiskárny.\n",
            "zvuk.md": "# Zvuk\n\nHlasitost nastavíte v horní liště.\n",
            "platby.md": "# Platby\n\nZa dobírku se připlácí 39 Kč, dobírku zaplatíte kurýrovi.\n"})


@pytest.mark.django_db
def test_a_question_without_diacritics_is_searched_as_if_typed_with_them(disk_help: Cast) -> None:
    """Seen red without the restoration: the full-weight lemma keys volný and místo are not
    matched (the bare words reach the page through half-weight folded and prefix keys)."""
    scope = TenantScope(tenant_id=disk_help.tenant.id, audience_ids=(disk_help.public_id,))
    bare = search(scope=scope, query="kde zjistim kolik mam jeste volneho mista na disku", ts_config="simple",
                  language="cs", k=3)
    typed = search(scope=scope, query="kde zjistím kolik mám ještě volného místa na disku", ts_config="simple",
                   language="cs", k=3)
    assert bare.candidates[0].slug == typed.candidates[0].slug == "disk"
    assert {"volný", "místo"} <= set(bare.candidates[0].matched_terms)
    assert bare.candidates[0].evidence != "weak"


@pytest.mark.django_db
def test_a_bare_word_the_dictionary_lacks_is_searched_in_the_tenants_spelling(disk_help: Cast) -> None:
    """Seen red without the vocabulary lookup: "dobirku" reached the page through half-weight
    folded and prefix keys only, which the gate's coverage does not count (demo-tlapka's y004)."""
    scope = TenantScope(tenant_id=disk_help.tenant.id, audience_ids=(disk_help.public_id,))
    bare = search(scope=scope, query="kolik stoji dobirku", ts_config="simple", language="cs", k=3)
    assert bare.candidates[0].slug == "platby"
    assert "dobírku" in bare.candidates[0].matched_terms


@pytest.mark.django_db
def test_another_tenants_spelling_is_never_read(disk_help: Cast, tmp_path: Path) -> None:
    """The vocabulary is read through the scope's weld: a spelling only another tenant's pages
    hold restores nothing, and its rows never reach this scope."""
    other = czech_cast("cs-diacritics-other", root=tmp_path, pages={
        "wifi.md": "# Bezdrátová síť\n\nBezdrátové připojení zapnete v horní liště.\n"})
    pattern = folding_pattern(["bezdratove"])
    own = TenantScope(tenant_id=disk_help.tenant.id, audience_ids=(disk_help.public_id,))
    theirs = TenantScope(tenant_id=other.tenant.id, audience_ids=(other.public_id,))
    assert theirs.terms_matching(pattern) == {"bezdrátové": 1}
    assert own.terms_matching(pattern) == {}
    assert restore_diacritics("bezdratove pripojeni", language="cs", lemma_frequency=own.document_frequencies,
                              terms_matching=own.terms_matching) == "bezdratove pripojeni"
