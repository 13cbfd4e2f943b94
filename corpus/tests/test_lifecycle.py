"""Archive, restore and delete a document (issue 19 item 2), through the admin and the API: the
question its page answers is answered with it before, not after, and again after a restore;
the BM25 statistics, the typo vocabulary and the answer cache follow in the same step.
Supersession rules and the ingest lock are checked on corpus.ingest.lifecycle directly."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from answering.tests.console_data import staff_client
from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.ingest.lifecycle import (DocumentNotFound, LifecycleRefused, document_archive, document_delete,
                              document_restore)
from corpus.models import Document
from corpus.ingest.store import INGEST_LOCK_NAMESPACE, archive_documents
from corpus.tests.helpers import all_audiences, assert_statistics_match_chunks, documents, stored_chunks
from tenants import actions
from tenants.rls import rls_transaction
from tenants.scope import TenantScope

QUESTION = "When are invoices sent?"
BILLING = "Invoices are sent on the first day of each month by email from the zorbulator system."
SHIPPING = "Parcels ship from the Brno warehouse within two working days."
TYPO = "zorbulatr"  # one letter short of a word only the billing page holds

pytestmark = pytest.mark.django_db


@pytest.fixture
def pages(acme: Cast, encoder: Encoder, tmp_path: Path) -> dict[str, int]:
    for slug, text in {"billing": BILLING, "shipping": SHIPPING}.items():
        (tmp_path / f"{slug}.md").write_text(f"# {slug.title()}\n\n{text}\n")
    assert ingest_paths(tenant=acme.tenant, paths=[tmp_path], encoder=encoder).ok
    return {slug: d.pk for (_, slug), d in documents(acme.tenant).items()}


def key_of(cast: Cast, audiences: tuple[str, ...] = ("public",)) -> str:
    return actions.api_key_create(tenant=cast.tenant, name="lifecycle", audience_slugs=audiences).raw_key


def ask(client: Client, key: str) -> dict[str, Any]:
    response = client.post("/api/v1/ask", data=json.dumps({"question": QUESTION}), content_type="application/json",
                           headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200, response.content
    return dict(response.json())


def cited(body: dict[str, Any]) -> set[str]:
    return {s["slug"] for s in body["sources"]} if body["action"] == "answered" else set()


def cache_entries_on(cast: Cast, document_id: int) -> int:
    chunk_ids = [row["id"] for row in stored_chunks(cast.tenant) if row["document_id"] == document_id]
    with rls_transaction(tenant_id=cast.tenant.id, all_audiences=True) as cursor:
        cursor.execute("SELECT count(*) FROM cachelayer_entry_chunk WHERE tenant_id = %s AND chunk_id = ANY(%s)",
                       [cast.tenant.id, chunk_ids])
        return int(cursor.fetchone()[0])


def vocabulary_knows(cast: Cast) -> bool:
    scope = TenantScope(tenant_id=cast.tenant.id, audience_ids=all_audiences(cast.tenant))
    return any(term.startswith("zorbul") for term, _, _ in scope.similar_terms(TYPO, limit=3, threshold=0.3))


def through_api(client: Client, key: str) -> Callable[[str, Cast, str, int], None]:
    def act(action: str, cast: Cast, slug: str, document_id: int) -> None:
        headers = {"Authorization": f"Bearer {key}"}
        response = (client.delete(f"/api/v1/documents/{slug}", headers=headers) if action == "delete"
                    else client.post(f"/api/v1/documents/{slug}/{action}", headers=headers))
        assert response.status_code in (200, 204), response.content
    return act


def through_admin(action: str, cast: Cast, slug: str, document_id: int) -> None:
    data = {"action": f"{action}_documents", "_selected_action": [str(document_id)], "confirm": "yes"}
    response = staff_client(cast.owner).post("/admin/corpus/document/", data)
    assert response.status_code == 302, response.content[:500]


@pytest.fixture(params=["api", "admin"])
def act(request: Any, client: Client, acme: Cast) -> Callable[[str, Cast, str, int], None]:
    return through_api(Client(), key_of(acme)) if request.param == "api" else through_admin


def assert_known(acme: Cast, client: Client, key: str, billing: int, *, known: bool) -> None:
    body = ask(client, key)
    assert ("billing" in cited(body)) is known, body
    assert vocabulary_knows(acme) is known
    assert_statistics_match_chunks(acme.tenant)


def test_archive_then_restore_leaves_and_rejoins_search_statistics_vocabulary_and_cache(
        acme: Cast, pages: dict[str, int], client: Client, act: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    key = key_of(acme)
    assert_known(acme, client, key, pages["billing"], known=True)
    assert cache_entries_on(acme, pages["billing"]) >= 1  # the answer was cached on the billing chunk
    with django_capture_on_commit_callbacks(execute=True):
        act("archive", acme, "billing", pages["billing"])
    assert documents(acme.tenant)[("doc", "billing")].status == "archived"
    assert_known(acme, client, key, pages["billing"], known=False)
    assert cache_entries_on(acme, pages["billing"]) == 0
    with django_capture_on_commit_callbacks(execute=True):
        act("restore", acme, "billing", pages["billing"])
    assert_known(acme, client, key, pages["billing"], known=True)


def test_delete_removes_the_document_its_chunks_statistics_vocabulary_and_cache(
        acme: Cast, pages: dict[str, int], client: Client, act: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    key = key_of(acme)
    assert_known(acme, client, key, pages["billing"], known=True)
    chunk_ids = [row["id"] for row in stored_chunks(acme.tenant) if row["document_id"] == pages["billing"]]
    assert cache_entries_on(acme, pages["billing"]) >= 1
    with django_capture_on_commit_callbacks(execute=True):
        act("delete", acme, "billing", pages["billing"])
    assert ("doc", "billing") not in documents(acme.tenant)
    assert not {row["id"] for row in stored_chunks(acme.tenant)} & set(chunk_ids)
    with rls_transaction(tenant_id=acme.tenant.id, all_audiences=True) as cursor:
        cursor.execute("SELECT count(*) FROM cachelayer_entry_chunk WHERE tenant_id = %s AND chunk_id = ANY(%s)",
                       [acme.tenant.id, chunk_ids])
        assert cursor.fetchone()[0] == 0
    assert_known(acme, client, key, pages["billing"], known=False)
    assert "shipping" in {slug for (_, slug) in documents(acme.tenant)}


def test_archiving_twice_and_restoring_a_live_document_count_nothing_twice(acme: Cast, pages: dict[str, int]) -> None:
    every = None
    document_archive(tenant=acme.tenant, document_ids=[pages["billing"]], audience_ids=every)
    again = document_archive(tenant=acme.tenant, document_ids=[pages["billing"]], audience_ids=every)
    assert again.changed == [] and again.unchanged == [pages["billing"]]
    document_restore(tenant=acme.tenant, document_ids=[pages["billing"]], audience_ids=every)
    live = document_restore(tenant=acme.tenant, document_ids=[pages["billing"], pages["shipping"]], audience_ids=every)
    assert live.changed == [] and sorted(live.unchanged) == sorted(pages.values())
    assert_statistics_match_chunks(acme.tenant)


def test_a_document_outside_the_writers_audiences_is_not_found_and_untouched(acme: Cast, pages: dict[str, int]) -> None:
    internal_only = {acme.internal_id}
    for action in (document_archive, document_restore, document_delete):
        with pytest.raises(DocumentNotFound):
            action(tenant=acme.tenant, document_ids=[pages["billing"]], audience_ids=internal_only)
    with pytest.raises(DocumentNotFound):  # all or nothing: the visible one is not archived either
        document_archive(tenant=acme.tenant, document_ids=[pages["billing"], 10**12], audience_ids=None)
    assert {d.status for d in documents(acme.tenant).values()} == {"active"}


def test_another_tenants_writer_cannot_reach_a_document(acme: Cast, globex: Cast, pages: dict[str, int]) -> None:
    with pytest.raises(DocumentNotFound):
        document_delete(tenant=globex.tenant, document_ids=[pages["billing"]], audience_ids=None)
    assert ("doc", "billing") in documents(acme.tenant)


def test_restoring_a_superseded_document_is_refused_and_deleting_its_successor_releases_it(
        acme: Cast, pages: dict[str, int]) -> None:
    old, new = pages["billing"], pages["shipping"]
    archive_documents(tenant=acme.tenant, document_ids=[old], superseded_by=new)
    with pytest.raises(LifecycleRefused, match="superseded by a newer version"):
        document_restore(tenant=acme.tenant, document_ids=[old], audience_ids=None)
    outcome = document_delete(tenant=acme.tenant, document_ids=[new], audience_ids=None)
    assert outcome.released == [old]
    predecessor = documents(acme.tenant)[("doc", "billing")]
    assert predecessor.status == "archived" and predecessor.superseded_by_id is None  # nothing came back on its own
    document_restore(tenant=acme.tenant, document_ids=[old], audience_ids=None)
    assert documents(acme.tenant)[("doc", "billing")].status == "active"
    assert_statistics_match_chunks(acme.tenant)


def test_deleting_a_successor_of_a_document_outside_the_writers_audiences_is_refused(
        acme: Cast, encoder: Encoder, pages: dict[str, int], tmp_path: Path) -> None:
    folder = tmp_path / "internal"
    folder.mkdir()
    (folder / "margins.md").write_text("# Margins\n\nThe anvil margin is forty percent.\n")
    ingest_paths(tenant=acme.tenant, paths=[folder], audience="internal", encoder=encoder)
    hidden = documents(acme.tenant)[("doc", "margins")].pk
    archive_documents(tenant=acme.tenant, document_ids=[hidden], superseded_by=pages["shipping"])
    with pytest.raises(LifecycleRefused, match="outside your audiences"):
        document_delete(tenant=acme.tenant, document_ids=[pages["shipping"]], audience_ids={acme.public_id})
    assert documents(acme.tenant)[("doc", "margins")].superseded_by_id == pages["shipping"]


def test_a_running_ingest_of_the_tenant_refuses_the_change(acme: Cast, pages: dict[str, int]) -> None:
    from django.db import connections

    other = connections.create_connection("default")  # another session, as the ingest process is
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [INGEST_LOCK_NAMESPACE, acme.tenant.id])
        with pytest.raises(LifecycleRefused, match="ingest of tenant acme is running"):
            document_archive(tenant=acme.tenant, document_ids=[pages["billing"]], audience_ids=None)
    finally:
        other.close()
    assert connection.vendor == "postgresql"
    with rls_transaction(tenant_id=acme.tenant.id, all_audiences=True):
        assert Document.objects.get(pk=pages["billing"]).status == "active"
