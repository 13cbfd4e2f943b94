"""The console's document list (issue 19 items 2 and 6): status, audience, chunk count, last
ingested and origin per row without a query per row; archive, restore and delete for tenant
admins, within their audiences only (the ask-before-and-after checks are in test_lifecycle.py)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from answering.tests.console_data import staff_client
from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.ingest.origin import COMMAND, DocumentOrigin
from corpus.ingest.store import archive_documents, tag_contested
from corpus.tests.helpers import documents
from tenants import actions

pytestmark = pytest.mark.django_db
LIST = "/admin/corpus/document/"


def ingest(cast: Cast, folder: Path, encoder: Encoder, pages: dict[str, str], audience: str = "public",
           origin: DocumentOrigin | None = None) -> None:
    folder.mkdir()
    for slug, text in pages.items():
        (folder / f"{slug}.md").write_text(f"# {slug}\n\n{text}\n")
    assert ingest_paths(tenant=cast.tenant, paths=[folder], audience=audience, encoder=encoder,
                        origin=origin if origin is not None else COMMAND).ok


@pytest.fixture
def pages(acme: Cast, globex: Cast, encoder: Encoder, tmp_path: Path) -> dict[str, int]:
    website = DocumentOrigin(kind="website", refs={str(tmp_path / "web" / "pricing.md"): "https://acme.test/pricing"},
                             fetched_at=datetime(2026, 11, 30, tzinfo=timezone.utc))
    ingest(acme, tmp_path / "docs", encoder, {"billing": "Invoices go out monthly.", "shipping": "Parcels ship daily."})
    ingest(acme, tmp_path / "web", encoder, {"pricing": "Plans start at ten euros."}, origin=website)
    ingest(acme, tmp_path / "internal", encoder, {"margins": "The margin is forty percent."}, audience="internal")
    ingest(globex, tmp_path / "globex", encoder, {"reagents": "Reagents ship chilled."})
    return {slug: d.pk for cast in (acme, globex) for (_, slug), d in documents(cast.tenant).items()}


def narrower_owner(cast: Cast) -> Any:
    """A tenant admin who holds the public audience only."""
    user = get_user_model().objects.create(username=f"{cast.tenant.slug}-narrow-owner", is_staff=True)
    actions.membership_grant(tenant=cast.tenant, user=user, role="owner", audience_slugs=["public"])
    return user


def act(client: Client, action: str, *ids: int, confirm: bool = True) -> Any:
    data: dict[str, Any] = {"action": f"{action}_documents", "_selected_action": [str(i) for i in ids]}
    if confirm:
        data["confirm"] = "yes"
    return client.post(LIST, data)


def status_of(cast: Cast, slug: str) -> str | None:
    document = documents(cast.tenant).get(("doc", slug))
    return document.status if document is not None else None


def test_the_list_shows_status_audience_chunks_last_ingested_and_origin(acme: Cast, pages: dict[str, int]) -> None:
    tag_contested(tenant=acme.tenant, document_ids=[pages["billing"]], match="monthly")
    archive_documents(tenant=acme.tenant, document_ids=[pages["shipping"]], superseded_by=pages["billing"])
    page = staff_client(acme.owner).get(LIST).content.decode()
    for heading in ("source type", "audience", "status", "chunk count", "last ingested", "origin"):
        assert heading in page.lower(), heading
    assert "live, contested" in page and "superseded" in page
    assert 'Website sync: <a href="https://acme.test/pricing" rel="noopener noreferrer">' in page
    assert "Ingest command: billing.md" in page or "Ingest command: /" in page
    assert "reagents" not in page  # another tenant's


def test_the_list_costs_the_same_queries_for_two_documents_or_twenty(
        acme: Cast, pages: dict[str, int], encoder: Encoder, tmp_path: Path,
        django_assert_num_queries: Any) -> None:
    owner = staff_client(acme.owner)
    owner.get(LIST)  # session and permission caches warm
    tag_contested(tenant=acme.tenant, document_ids=[pages["billing"]], match="monthly")
    with django_assert_num_queries(QUERIES):
        assert owner.get(LIST).status_code == 200
    ingest(acme, tmp_path / "more", encoder, {f"page-{i}": f"Fact number {i} about anvils." for i in range(16)})
    tag_contested(tenant=acme.tenant, document_ids=[documents(acme.tenant)[("doc", "page-3")].pk], match="anvils")
    with django_assert_num_queries(QUERIES):
        page = owner.get(LIST).content.decode()
    assert page.count("live, contested") == 2


# Pinned for one tenant's page: the session, the user, staff access, the filters' choices, the
# counts, the page itself, and one scoped chunk read for every contested flag on it (with the
# transaction and settings around it). A query per row would add one per document.
QUERIES = 22


def test_an_agent_sees_documents_but_no_lifecycle_actions(acme: Cast, pages: dict[str, int]) -> None:
    agent = staff_client(acme.agent)
    page = agent.get(LIST).content.decode()
    assert "billing" in page and "archive_documents" not in page
    act(agent, "archive", pages["billing"])
    assert status_of(acme, "billing") == "active"


def test_a_narrower_admin_neither_sees_nor_acts_on_an_audience_it_lacks(acme: Cast, pages: dict[str, int]) -> None:
    narrow = staff_client(narrower_owner(acme))
    page = narrow.get(LIST).content.decode()
    assert "billing" in page and "margins" not in page
    assert narrow.get(f"{LIST}{pages['margins']}/change/").status_code == 404
    for action in ("archive", "delete"):
        act(narrow, action, pages["margins"])
    assert status_of(acme, "margins") == "active"
    act(narrow, "archive", pages["billing"], pages["margins"])  # the visible one only
    assert status_of(acme, "billing") == "archived" and status_of(acme, "margins") == "active"


def test_another_tenants_admin_cannot_act_on_a_document(acme: Cast, globex: Cast, pages: dict[str, int]) -> None:
    globex_owner = staff_client(globex.owner)
    for action in ("archive", "delete"):
        act(globex_owner, action, pages["billing"])
    assert status_of(acme, "billing") == "active"
    outsider = staff_client(acme.outsider)
    act(outsider, "delete", pages["billing"])
    assert status_of(acme, "billing") == "active"


def test_delete_asks_first_then_deletes_and_says_what_it_did(acme: Cast, pages: dict[str, int]) -> None:
    owner = staff_client(acme.owner)
    confirm = act(owner, "delete", pages["billing"], confirm=False)
    assert confirm.status_code == 200 and "Yes, delete them" in confirm.content.decode()
    assert status_of(acme, "billing") == "active"
    done = act(owner, "delete", pages["billing"])
    assert done.status_code == 302 and status_of(acme, "billing") is None
    messages = owner.get(LIST).content.decode()
    assert "cme: 1 document(s) deleted, 1 chunk(s)." in messages  # the console capitalises the first letter


def test_a_refusal_is_shown_and_changes_nothing(acme: Cast, pages: dict[str, int]) -> None:
    archive_documents(tenant=acme.tenant, document_ids=[pages["shipping"]], superseded_by=pages["billing"])
    owner = staff_client(acme.owner)
    act(owner, "restore", pages["shipping"])
    assert "superseded by a newer version" in owner.get(LIST).content.decode()
    assert status_of(acme, "shipping") == "archived"
