"""Every document records where it came from (issue 19 item 6): the ingest command's path, a
website page's URL and fetch time; uploads and escalations are checked in test_jobs.py and
answering/tests/test_console_escalations.py."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.models import Document
from corpus.ingest.origin import DocumentOrigin
from tenants.rls import rls_transaction


def _origins(cast: Cast) -> dict[str, tuple[str, str, datetime | None]]:
    with rls_transaction(tenant_id=cast.tenant.id, all_audiences=True):
        return {slug: (origin, ref, fetched) for slug, origin, ref, fetched in Document.objects.filter(
            tenant=cast.tenant).values_list("slug", "origin", "origin_ref", "fetched_at")}


@pytest.mark.django_db
def test_the_ingest_command_records_the_path_it_read(acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    (tmp_path / "setup.md").write_text("# Setup\n\nInstall the agent with pip.\n")
    ingest_paths(tenant=acme.tenant, paths=[tmp_path], encoder=encoder)
    assert _origins(acme)["setup"] == ("command", str(tmp_path / "setup.md"), None)


@pytest.mark.django_db
def test_a_website_page_records_its_url_and_fetch_time(acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    page = tmp_path / "billing.html"
    page.write_text("<html><head><title>Billing</title></head><body><h1>Billing</h1>"
                    "<p>Invoices are sent on the first day of each month.</p></body></html>")
    fetched = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    origin = DocumentOrigin(kind="website", refs={str(page): "https://help.acme.test/billing"}, fetched_at=fetched)
    ingest_paths(tenant=acme.tenant, paths=[tmp_path], encoder=encoder, origin=origin)
    assert _origins(acme)["billing"] == ("website", "https://help.acme.test/billing", fetched)


def test_an_unknown_origin_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="origin 'ftp' is not one of"):
        DocumentOrigin(kind="ftp")


def test_references_resolve_ref_then_refs_then_the_path_under_root(tmp_path: Path) -> None:
    path = str(tmp_path / "a" / "b.md")
    assert DocumentOrigin(root=tmp_path).ref_for(path + "#entry-2") == "a/b.md"
    assert DocumentOrigin(refs={path: "https://x.test/b"}, root=tmp_path).ref_for(path) == "https://x.test/b"
    assert DocumentOrigin(kind="escalation", ref="escalation #7", refs={path: "no"}).ref_for(path) == "escalation #7"
    assert DocumentOrigin().ref_for("/elsewhere/c.md") == "/elsewhere/c.md"
