"""A Czech question typed without diacritics is written again with them before it is searched
(docs/decisions/0114): the dictionary proposes the forms, the tenant's pages choose."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import Cast, czech_cast
from corpus.language.diacritics import restore_diacritics
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
            "zvuk.md": "# Zvuk\n\nHlasitost nastavíte v horní liště.\n"})


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
