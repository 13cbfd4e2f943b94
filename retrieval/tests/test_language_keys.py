"""Czech keys, negative tests first (docs/decisions/0050, the founding record's lesson).

Each case held on lemma + stem keys and failed on the four-letter prefix keys they replaced
(0050's red run; the prefix scheme and its arms were removed later, as 0050's status says).
Only the keyword leg runs (mode="keyword"): these are the keys' tests, not the encoder's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.test.utils import override_settings

from conftest import czech_cast
from retrieval.search import search
from tenants.scope import TenantScope

DOCS = {
    "venceni.md": "# Venčení\n\nKaždého psa venčíme dvakrát denně, ráno a večer.\n",
    "krmeni.md": "# Krmení\n\nPsovi dáváme granule jednou denně.\n",
    "pesto.md": "# Bazalkové pesto\n\nPesto připravíte z bazalky, oříšků, oleje a sýra.\n",
    "darek.md": "# Dárek\n\nPavlovi jsme k narozeninám poslali knihu.\n",
    "pavlac.md": "# Domovní řád\n\nNa pavlači se nesmí sušit prádlo.\n",
    "otevreno.md": "# Otevírací doba\n\nPoradna je otevřena každého dne od osmi do čtyř.\n",
    "pohadka.md": "# Pohádka\n\nV pohádce se vypráví o lišce, která přelstila havrana.\n",
    "bez-hacku.md": "# Zapis bez hacku\n\nPoznamka o liska zapsana bez diakritiky na klavesnici.\n",
    "s-hacky.md": "# Zápis s háčky\n\nPoznámka o liška zapsaná s diakritikou na klávesnici.\n",
}

# (question, page it must find, page it must not find): None where the case has only one side.
CASES = {
    "pes finds psa": ("pes", "venceni", None),
    "pes finds psovi": ("pes", "krmeni", None),
    "pes does not find pesto": ("pes", None, "pesto"),
    "pesto does not find pes": ("pesto", None, "venceni"),
    "Pavlovi does not match pavlač": ("Pavlovi", None, "pavlac"),
    "den finds dne": ("den", "otevreno", None),
    "liška finds lišce": ("liška", "pohadka", None),
}
# Controls: the same pages are findable by their own words.
CONTROLS = {
    "pesto finds pesto": ("pesto", "pesto"),
    "Pavlovi finds Pavlovi": ("Pavlovi", "darek"),
    "pavlači finds pavlači": ("pavlači", "pavlac"),
    "psa finds psa": ("psa", "venceni"),
}


@dataclass
class KeyedTenants:
    scopes: dict[str, TenantScope]


def _tenant(slug: str, root: Path) -> TenantScope:
    cast = czech_cast(slug, root=root, pages=DOCS)
    return TenantScope(tenant_id=cast.tenant.id, audience_ids=(cast.public_id,))


@pytest.fixture(scope="module")
def keyed(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> KeyedTenants:
    with django_db_blocker.unblock():
        return KeyedTenants({"auto": _tenant("cs-keys", tmp_path_factory.mktemp("keys"))})


def _pages(keyed: KeyedTenants, question: str) -> list[str]:
    result = search(scope=keyed.scopes["auto"], query=question, ts_config="simple", language="cs",
                    mode="keyword", rerank="off", k=10)
    return [c.slug for c in result.candidates]


def _holds(pages: list[str], found: str | None, absent: str | None) -> bool:
    return (found is None or found in pages) and (absent is None or absent not in pages)


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(CASES))
def test_lemma_and_stem_keys_hold(keyed: KeyedTenants, name: str) -> None:
    question, found, absent = CASES[name]
    pages = _pages(keyed, question)
    assert _holds(pages, found, absent), (name, pages)


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_controls_find_their_own_words(keyed: KeyedTenants, name: str) -> None:
    question, found = CONTROLS[name]
    assert found in _pages(keyed, question), name


@pytest.mark.django_db
def test_folded_match_found_but_never_above_the_exact_one(keyed: KeyedTenants) -> None:
    with_diacritics = _pages(keyed, "liška")
    assert with_diacritics.index("s-hacky") < with_diacritics.index("bez-hacku"), with_diacritics
    without = _pages(keyed, "liska")
    assert "bez-hacku" in without and "s-hacky" in without, without


@pytest.mark.django_db
def test_a_czech_name_no_page_holds_is_unknown_in_any_of_its_forms(keyed: KeyedTenants) -> None:
    """0051's rule for a keyed language: a word written as a name counts by its lemma key, so
    `Německa` is unknown here and `Pavlovi` (the page says Pavlovi, the lemma is Pavel) is not."""
    def unknown(question: str) -> tuple[str, ...]:
        return search(scope=keyed.scopes["auto"], query=question, ts_config="simple", language="cs",
                      mode="keyword", rerank="off").unknown_names

    assert unknown("Venčíte psa i v Německu?") == ("německo",)
    assert unknown("Poslali jste knihu Pavlovi?") == ()


def _unknown(keyed: KeyedTenants, question: str) -> tuple[str, ...]:
    return search(scope=keyed.scopes["auto"], query=question, ts_config="simple", language="cs",
                  mode="keyword", rerank="off").unknown_names


@pytest.mark.django_db
def test_a_dictionary_word_no_page_holds_is_no_unknown_name(keyed: KeyedTenants) -> None:
    """`koně` is a word the dictionary knows (kůň) and no page holds in any form: only a word
    written as a name counts (0051); counting such words too was measured and not adopted (0050)."""
    assert _unknown(keyed, "Venčíte také koně?") == ()


@pytest.mark.django_db
def test_a_typo_is_left_to_correction(keyed: KeyedTenants) -> None:
    """`pesot` is no word the dictionary knows (a typo of `pesto`) and no page holds any of its
    keys: it stays a typo, never an unknown name."""
    result = search(scope=keyed.scopes["auto"], query="Připravíte pesot z bazalky?", ts_config="simple", language="cs",
                    mode="keyword", rerank="off")
    assert result.unknown_names == ()
    assert "pesot" in result.terms.lexemes or [c.original for c in result.corrections] == ["pesot"]


@pytest.mark.django_db
def test_a_language_no_encoder_reads_is_searched_by_its_keyword_leg(keyed: KeyedTenants) -> None:
    """docs/decisions/0062, 0112: with the multilingual encoder off, `hybrid` in Czech is the
    keyword leg alone (no chunk is ranked by the English model's neighbours); with it on (the
    default), both legs run, as in English. Seen red with mode_for_language returning `hybrid`
    whatever the language."""
    def legs(language: str, mode: str | None = None) -> set[str]:
        result = search(scope=keyed.scopes["auto"], query="Kolikrát denně venčíte psa?", ts_config="simple",
                        language=language, rerank="off", k=10, mode=mode)
        return {leg for c in result.candidates for leg in c.ranks}

    assert legs("cs") == {"keyword", "vector"}
    with override_settings(EMBEDDING_MULTILINGUAL="off"):
        assert legs("cs") == {"keyword"}
        assert legs("cs", mode="vector") == {"vector"}  # an explicit mode is never narrowed


@pytest.mark.django_db
def test_the_english_reranker_does_not_reorder_a_language_it_does_not_read(keyed: KeyedTenants) -> None:
    """docs/decisions/0062: no reranking for Czech, the configured mode for English; an explicit
    rerank argument always wins. Seen red with rerank_for_language returning RETRIEVAL_RERANK_MODE
    unchanged."""
    def reranked(language: str, **options: Any) -> bool:
        return search(scope=keyed.scopes["auto"], query="Kolikrát denně venčíte psa?", ts_config="simple",
                      language=language, k=5, **options).reranked

    with override_settings(RETRIEVAL_RERANK_MODE="always"):
        assert not reranked("cs")
        assert reranked("en")
        assert reranked("cs", rerank="always")


@pytest.mark.django_db
def test_a_czech_typo_one_edit_from_a_known_form_is_corrected_to_its_lemma(keyed: KeyedTenants) -> None:
    """Issue 49 item 3: `psvoi` (a swap in `psovi`) shares too few trigrams with any lemma the
    pages hold, and the vocabulary holds `pes`, never `psovi`: the edit is tried on the word and
    the dictionary's lemma of the variant is looked up. The typo's own keys (held by no chunk)
    are dropped and the variant's stem joins the lemma, so the word counts as the spelled one
    does. Seen red without the keyed edit (no correction, the page not found)."""
    result = search(scope=keyed.scopes["auto"], query="Dáváte psvoi granule?", ts_config="simple", language="cs",
                    mode="keyword", rerank="off", k=10)
    assert [(c.original, c.corrected, c.kind) for c in result.corrections] == [("psvoi", "pes", "edit")]
    assert "pes" in result.terms.lexemes and "~s:psov" in result.terms.lexemes
    assert not [t for t in result.terms.lexemes if "psvoi" in t or t.startswith("~p:psvo")], result.terms.lexemes
    assert [c.slug for c in result.candidates][0] == "krmeni"


@pytest.mark.django_db
def test_a_word_the_dictionary_knows_is_not_moved_by_a_czech_edit(keyed: KeyedTenants) -> None:
    """`pas` (a passport) is one edit from `pes` and a word of its own: 0099's rule holds in Czech."""
    result = search(scope=keyed.scopes["auto"], query="Venčíte pas?", ts_config="simple", language="cs",
                    mode="keyword", rerank="off", k=10)
    assert not [c for c in result.corrections if c.kind == "edit"], result.corrections


@pytest.mark.django_db
def test_scaffolding_typed_without_diacritics_is_no_missing_word(keyed: KeyedTenants) -> None:
    """`Muzete` is `můžete` (moci, a stop word) typed without diacritics: no key of it, so the
    question covers its page as the spelled one does. Seen red with the folded stop forms off."""
    def coverage(question: str) -> float:
        return search(scope=keyed.scopes["auto"], query=question, ts_config="simple", language="cs",
                      mode="keyword", rerank="off", k=10).query_coverage

    assert coverage("Můžete venčit psa?") == coverage("Muzete venčit psa?") > 0
