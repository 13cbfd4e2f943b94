"""Where a source comes from, as a reader sees it (issue 19 item 6): the API's sources carry the
document's origin, and a website page's URL; the chat page links a website source to its page,
and never a reference that is not an http(s) address."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from answering.tests.chat_helpers import ask_and_stream
from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.ingest.origin import DocumentOrigin, source_url
from tenants import actions

PAGE_URL = "https://help.acme.test/billing"
QUESTION = "When are invoices sent?"


@pytest.fixture
def website_page(acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    page = tmp_path / "billing.html"
    page.write_text("<html><head><title>Billing</title></head><body><h1>Billing</h1>"
                    "<p>Invoices are sent on the first day of each month by email.</p></body></html>")
    origin = DocumentOrigin(kind="website", refs={str(page): PAGE_URL},
                            fetched_at=datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc))
    assert ingest_paths(tenant=acme.tenant, paths=[tmp_path], encoder=encoder, origin=origin).ok


@pytest.mark.django_db
def test_the_apis_source_names_its_origin_and_url(acme: Cast, website_page: None, client: Client) -> None:
    key = actions.api_key_create(tenant=acme.tenant, name="reader", audience_slugs=["public"]).raw_key
    response = client.post("/api/v1/ask", data=json.dumps({"question": QUESTION}), content_type="application/json",
                           headers={"Authorization": f"Bearer {key}"})
    body = response.json()
    assert body["action"] == "answered", body
    assert body["sources"][0]["origin"] == "website" and body["sources"][0]["url"] == PAGE_URL


@pytest.mark.django_db
def test_the_chat_page_links_a_website_source_to_its_page(acme: Cast, website_page: None, client: Client) -> None:
    events = ask_and_stream(client, acme.tenant.slug, QUESTION)
    html = "".join(data for _, data in events)
    assert f'<a class="source-link" href="{PAGE_URL}" target="_blank" rel="noopener noreferrer">{PAGE_URL}</a>' in html


@pytest.mark.parametrize(("origin", "ref", "url"), [
    ("website", PAGE_URL, PAGE_URL),
    ("website", "javascript:alert(1)", ""),
    ("upload", "https://looks-like-a-url.test/", ""),  # a file's name, whatever it spells
    ("command", "/srv/docs/billing.md", ""),
])
def test_only_a_website_pages_http_address_is_a_link(origin: str, ref: str, url: str) -> None:
    assert source_url(origin=origin, ref=ref) == url


def test_a_source_cached_before_origins_were_kept_still_renders(**_: Any) -> None:
    from answering.chat.render import sources_html

    old = {"number": 1, "chunk_id": 1, "document_id": 1, "slug": "a", "title": "A", "source_type": "doc",
           "heading_path": "", "page": None, "snippet": "x", "effective_date": None}
    assert "source-link" not in sources_html(sources=[old], turn_id="t1", final=True)
