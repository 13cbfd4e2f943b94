"""Slovak keys, the second keyed language (issue 49 item 5, docs/decisions/0125): nothing of the key
scheme may be Czech by accident. The Czech cases of test_language_keys.py again in Slovak words,
the case where the Czech stemmer is wrong for Slovak (`váze`, a vase, is not `váha`, a weight),
a word the Slovak dictionary lacks finding its inflection by its prefix, and a language
simplemma has no dictionary for at all, whose keys are prefix keys.

Only the keyword leg runs: the encoder is English (docs/decisions/0062).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from corpus.ingest.flow import ingest_paths
from corpus.language import keys
from retrieval.search import search
from tenants import actions
from tenants.models import Audience, Tenant
from tenants.scope import ChunkQuery, TenantScope

DOCS = {
    "venceni.md": "# Venčenie\n\nKaždého psa venčíme dvakrát denne, ráno a večer.\n",
    "krmenie.md": "# Kŕmenie\n\nPsovi dávame granule raz denne.\n",
    "pesto.md": "# Bazalkové pesto\n\nPesto pripravíte z bazalky, orieškov, oleja a syra.\n",
    "darcek.md": "# Darček\n\nPavlovi sme k narodeninám poslali knihu.\n",
    "pavlac.md": "# Domový poriadok\n\nNa pavlači sa nesmie sušiť bielizeň.\n",
    "poradna.md": "# Otváracie hodiny\n\nPoradňu zastihnete počas celého dňa, od ôsmej do štvrtej.\n",
    "rozpravka.md": "# Rozprávka\n\nV rozprávke sa rozpráva o líške, ktorá prekabátila havrana.\n",
    "vaza.md": "# Dekorácie\n\nKvety dodávame v sklenenej váze.\n",
    "vaha.md": "# Poštovné\n\nPoštovné závisí od váhy balíka.\n",
    "pelisky.md": "# Pelíšky\n\nPelíšky perieme na štyridsať stupňov.\n",
    "bez-makcenov.md": "# Zapis bez makcenov\n\nPoznamka o liska zapisana bez diakritiky na klavesnici.\n",
    "s-makcenmi.md": "# Zápis s mäkčeňmi\n\nPoznámka o líška zapísaná s diakritikou na klávesnici.\n",
}

# (question, page it must find, page it must not find): None where the case has only one side.
CASES = {
    "pes finds psa": ("pes", "venceni", None),
    "pes finds psovi": ("pes", "krmenie", None),
    "pes does not find pesto": ("pes", None, "pesto"),
    "pesto does not find pes": ("pesto", None, "venceni"),
    "Pavlovi does not match pavlač": ("Pavlovi", None, "pavlac"),
    "deň finds dňa": ("deň", "poradna", None),
    "líška finds líške": ("líška", "rozpravka", None),
    # The Czech stemmer cuts `váze` to `váh` (Czech `váha` → `váze`), the stem of `váha`; Slovak
    # says `váhe` there, and its `váze` is only the vase's.
    "váha does not find váze": ("váha", "vaha", "vaza"),
    "pelíšok finds pelíšky": ("pelíšok", "pelisky", None),
}
CONTROLS = {
    "pesto finds pesto": ("pesto", "pesto"),
    "Pavlovi finds Pavlovi": ("Pavlovi", "darcek"),
    "pavlači finds pavlači": ("pavlači", "pavlac"),
    "psa finds psa": ("psa", "venceni"),
    "váze finds váze": ("váze", "vaza"),
}


def _slovak_tenant(root: Path) -> TenantScope:
    """Created as the console creates one: the language chosen, the search configuration left at
    its default (`english`), which a keyed language's chunks and questions never read."""
    tenant = actions.tenant_create(slug="sk-keys", name="Slovenská poradňa", language="sk")
    for name, text in DOCS.items():
        (root / name).write_text(text)
    ingest_paths(tenant=tenant, paths=[root])
    return TenantScope(tenant_id=tenant.id, audience_ids=(Audience.objects.get(tenant=tenant, slug="public").id,))


@pytest.fixture(scope="module")
def slovak(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> TenantScope:
    with django_db_blocker.unblock():
        return _slovak_tenant(tmp_path_factory.mktemp("sk-keys"))


def _pages(scope: TenantScope, question: str, *, language: str = "sk") -> list[str]:
    result = search(scope=scope, query=question, ts_config="english", language=language, mode="keyword",
                    rerank="off", k=10)
    return [c.slug for c in result.candidates]


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(CASES))
def test_slovak_keys_hold(slovak: TenantScope, name: str) -> None:
    question, found, absent = CASES[name]
    pages = _pages(slovak, question)
    assert (found is None or found in pages) and (absent is None or absent not in pages), (name, pages)


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_slovak_controls_find_their_own_words(slovak: TenantScope, name: str) -> None:
    question, found = CONTROLS[name]
    assert found in _pages(slovak, question), name


@pytest.mark.django_db
def test_slovak_chunks_are_keyed_whatever_the_search_configuration(slovak: TenantScope) -> None:
    tenant = Tenant.objects.get(pk=slovak.tenant_id)
    assert (tenant.language, tenant.text_search_config) == ("sk", "english")
    rows = slovak.fetch(ChunkQuery(select=sql.SQL("c.id, c.language_keys IS NOT NULL AS keyed")))
    assert rows and all(row["keyed"] for row in rows), rows


@pytest.mark.django_db
def test_a_slovak_folded_match_is_found_but_never_above_the_exact_one(slovak: TenantScope) -> None:
    with_diacritics = _pages(slovak, "líška")
    assert with_diacritics.index("s-makcenmi") < with_diacritics.index("bez-makcenov"), with_diacritics
    without = _pages(slovak, "liska")
    assert "bez-makcenov" in without and "s-makcenmi" in without, without


@pytest.mark.django_db
def test_a_slovak_question_finds_its_page_through_the_question_words(slovak: TenantScope) -> None:
    """A whole question in other word forms: `venčíte` finds `venčíme` (venčiť)."""
    assert _pages(slovak, "Koľkokrát denne venčíte psa?")[0] == "venceni"


@pytest.mark.django_db
def test_a_word_the_slovak_dictionary_lacks_finds_its_inflection_by_its_prefix(slovak: TenantScope) -> None:
    """`pelíšok` is no word of simplemma's Slovak dictionary: its prefix key, at half weight, is
    what `pelíšky` holds (without it, typo correction would have to guess)."""
    result = search(scope=slovak, query="pelíšok", ts_config="english", language="sk", mode="keyword",
                    rerank="off", k=10)
    assert result.terms.weights == {"~p:peli": keys.HALF} and not result.corrections, result.terms
    assert [c.slug for c in result.candidates] == ["pelisky"]


@pytest.mark.django_db
def test_a_slovak_tenant_indexed_before_slovak_was_keyed_is_keyed_again(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Slovak's entry changes the ingest fingerprint of Slovak tenants only (the Czech and English
    ones are pinned in corpus/tests/test_language.py): its stored chunks are keyed again on the
    next ingest, not skipped as unchanged, and then found by their inflections."""
    tenant = actions.tenant_create(slug="sk-before", name="Slovenská poradňa", language="sk")
    (tmp_path / "venceni.md").write_text(DOCS["venceni.md"])
    scope = TenantScope(tenant_id=tenant.id, audience_ids=(Audience.objects.get(tenant=tenant, slug="public").id,))
    with monkeypatch.context() as before_slovak:
        before_slovak.delitem(keys.KEYED_LANGUAGES, "sk")
        assert ingest_paths(tenant=tenant, paths=[tmp_path]).added == 1
        assert _pages(scope, "pes") == []
    again = ingest_paths(tenant=tenant, paths=[tmp_path])
    assert (again.changed, again.unchanged) == (1, 0)
    assert _pages(scope, "pes") == ["venceni"]
    assert ingest_paths(tenant=tenant, paths=[tmp_path]).unchanged == 1


# Belarusian: neither PostgreSQL nor simplemma 2.0.0 has it. It stands for a language keyed here
# before its dictionary exists: every word is one the dictionary does not know.
BELARUSIAN = {
    "knihi.md": "# Кнігі\n\nКнігу можна вярнуць на працягу месяца.\n",
    "dastauka.md": "# Дастаўка\n\nПасылкі дастаўляем за два дні.\n",
}


@pytest.fixture(scope="module")
def undictionaried(django_db_setup: Any, django_db_blocker: Any,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[TenantScope]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(keys.KEYED_LANGUAGES, "be", keys.KeyedLanguage(version="1", stop=frozenset()))
        root = tmp_path_factory.mktemp("be-keys")
        for name, text in BELARUSIAN.items():
            (root / name).write_text(text)
        with django_db_blocker.unblock():
            tenant = actions.tenant_create(slug="be-keys", name="Belarusian", language="be", text_search_config="simple")
            ingest_paths(tenant=tenant, paths=[root])
            public = Audience.objects.get(tenant=tenant, slug="public").id
        yield TenantScope(tenant_id=tenant.id, audience_ids=(public,))


@pytest.mark.django_db
def test_without_a_dictionary_inflections_meet_by_their_prefix(undictionaried: TenantScope) -> None:
    assert not keys.has_dictionary("be")
    assert _pages(undictionaried, "кніга", language="be") == ["knihi"]  # кніга ~ Кнігу, Кнігі
    assert _pages(undictionaried, "пасылка", language="be") == ["dastauka"]  # пасылка ~ Пасылкі
    result = search(scope=undictionaried, query="кніга", ts_config="simple", language="be", mode="keyword",
                    rerank="off", k=10)
    assert result.terms.weights == {"~p:кніг": keys.HALF}, result.terms  # the prefix, at half weight

