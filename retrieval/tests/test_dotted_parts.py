"""A word the vocabulary holds only inside a dotted identifier (docs/decisions/0075).

PostgreSQL's parser keeps `acme.cache.backends.LedgerCache` as one host token, so a question
naming `LedgerCache` alone matches no term: the keyword leg misses the section and 0051's rule
would call the name unknown. The word searches for the identifier instead, read from the
asker's own visible vocabulary only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Cast, _make_cast
from corpus.ingest.flow import ingest_paths
from retrieval.search import search
from tenants.scope import TenantScope

DOCS = {
    "cache.md": "# Cache\n\n## Ledger cache\n\nSet BACKEND to acme.cache.backends.LedgerCache to keep "
                "entries in a database table.\n",
    "vault.md": "---\naudience: internal\n---\n# Vault\n\n## Keys\n\nRotate keys with acme.vault.QuokkaRotor "
                "every week.\n",
}
OTHER = {"clock.md": "# Scheduler\n\n## Jobs\n\nJobs run on globex.sched.MarmosetClock every hour.\n"}


def _ingest(cast: Cast, root: Path, docs: dict[str, str]) -> None:
    root.mkdir()
    for name, text in docs.items():
        (root / name).write_text(text)
    ingest_paths(tenant=cast.tenant, paths=[root])


@pytest.fixture
def world(db: Any, tmp_path: Path) -> TenantScope:
    acme, globex = _make_cast("parts-acme"), _make_cast("parts-globex")
    _ingest(acme, tmp_path / "acme", DOCS)
    _ingest(globex, tmp_path / "globex", OTHER)
    return TenantScope(tenant_id=acme.tenant.id, audience_ids=(acme.public_id,))


def _parts(result: Any) -> list[tuple[str, str]]:
    return [(c.original, c.corrected) for c in result.corrections if c.kind == "part"]


@pytest.mark.django_db
def test_a_word_held_only_inside_a_dotted_identifier_searches_for_it(world: TenantScope) -> None:
    question = "Which table does the LedgerCache keep its entries in?"
    on = search(scope=world, query=question, ts_config="english", k=3)
    assert _parts(on) == [("ledgercach", "acme.cache.backends.ledgercache")]
    assert on.unknown_names == ()
    assert on.candidates[0].heading_path == "Cache > Ledger cache"
    assert "acme.cache.backends.ledgercache" in on.candidates[0].matched_terms
    assert on.as_trace()["corrections"][0]["kind"] == "part"


@pytest.mark.django_db
def test_a_part_is_read_only_from_the_askers_visible_vocabulary(world: TenantScope) -> None:
    """An internal page's identifier and another tenant's are never what a public question's
    word resolves to: the name stays unknown, as if those pages did not exist."""
    for name in ("QuokkaRotor", "MarmosetClock"):
        result = search(scope=world, query=f"How often does the {name} run?", ts_config="english", k=3)
        assert not _parts(result), name
        assert result.unknown_names == (name.lower(),), name


@pytest.mark.django_db
def test_a_part_is_found_among_dotted_terms_only_and_never_an_exact_identifiers(world: TenantScope) -> None:
    """The lookup reads the scope's dotted terms alone (the partial index of 0129): a plain
    term that equals the word, or the `=…` exact-identifier key of the same identifier, is not
    a dotted part of anything. Seen red with the lookup over the whole vocabulary."""
    assert world.terms_with_part("ledgercache", limit=3) == [("acme.cache.backends.ledgercache", 1)]
    assert world.terms_with_part("table", limit=3) == []  # a plain term of the page, no dotted one
    assert world.terms_with_part("quokkarotor", limit=3) == []  # internal: outside this scope
