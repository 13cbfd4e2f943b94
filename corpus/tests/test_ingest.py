from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.ingest.hooks import chunk_listener_register, chunk_listener_unregister
from corpus.tests.helpers import assert_statistics_match_chunks, chunk_counts, documents, stored_chunks
from corpus.tests.pdfs import make_pdf
from tenants.models import Tenant

RETIRED: list[dict[str, Any]] = []


def record_retired(**kwargs: Any) -> None:
    RETIRED.append(kwargs)


@contextmanager
def listening() -> Iterator[None]:
    chunk_listener_register(record_retired)
    try:
        yield
    finally:
        chunk_listener_unregister(record_retired)


def build_folder(root: Path) -> Path:
    docs = root / "docs"
    (docs / "billing").mkdir(parents=True)
    (docs / "billing" / "pricing-2024.md").write_text(
        "---\ntitle: Pricing 2024\n---\n# Pricing 2024\n\n## Plans\n\nThe Pro plan costs $29/month.\n")
    (docs / "billing" / "pricing.md").write_text(
        "---\ntitle: Pricing\nsupersedes: billing/pricing-2024\neffective_date: 2025-01-01\n---\n"
        "# Pricing\n\n## Plans\n\nThe Pro plan costs $35/month.\n")
    (docs / "guides").mkdir()
    (docs / "guides" / "webhooks.md").write_text(
        "# Webhooks\n\n## Retries\n\nFailed webhooks are retried 5 times with exponential backoff.\n\n"
        "## Signing\n\nEvery webhook carries a signature header.\n")
    (docs / "internal").mkdir()
    (docs / "internal" / "runbook.md").write_text(
        "---\naudience: internal\n---\n# Runbook\n\nPage the on-call engineer at extension 4412.\n")
    (docs / "manual.pdf").write_bytes(make_pdf([["Manual", "Refunds take 5 days.", "1"],
                                                ["Manual", "Disputes close in 30 days.", "2"],
                                                ["Manual", "Contact support.", "3"]]))
    (docs / "answerdesk-manifest.yaml").write_text(
        "conflicts:\n  - id: webhook-retries\n    match: retried\n    documents:\n"
        "      - {source: doc, slug: guides/webhooks}\n")
    return docs


@pytest.mark.django_db
def test_ingest_end_to_end(acme: Cast, encoder: Encoder, tmp_path: Path,
                           django_capture_on_commit_callbacks: Any) -> None:
    folder = build_folder(tmp_path)
    report = ingest_paths(tenant=acme.tenant, paths=[folder], encoder=encoder)
    assert report.ok, report.failed
    assert (report.added, report.changed, report.unchanged, report.archived) == (5, 0, 0, 1)
    docs = documents(acme.tenant)
    assert docs[("doc", "billing/pricing-2024")].status == "archived"
    assert docs[("doc", "billing/pricing-2024")].superseded_by_id == docs[("doc", "billing/pricing")].pk
    assert docs[("doc", "internal/runbook")].audience_id == acme.internal_id
    assert docs[("pdf", "manual")].chunk_count == 3
    chunks = stored_chunks(acme.tenant)
    by_doc = {d.pk: key for key, d in docs.items()}
    pdf_pages = [c["page"] for c in chunks if by_doc[c["document_id"]] == ("pdf", "manual")]
    assert pdf_pages == [1, 2, 3]
    contested = [c for c in chunks if c["contested"]]
    assert len(contested) == 1 and "retried 5 times" in contested[0]["content"]
    assert all(c["archived"] == (by_doc[c["document_id"]] == ("doc", "billing/pricing-2024")) for c in chunks)
    assert all(c["token_count"] <= encoder.max_content_tokens for c in chunks)
    assert chunk_counts(acme.tenant) == {d.pk: d.chunk_count for d in docs.values()}
    assert_statistics_match_chunks(acme.tenant)


@pytest.mark.django_db
def test_the_report_says_where_the_time_went(acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    report = ingest_paths(tenant=acme.tenant, paths=[build_folder(tmp_path)], encoder=encoder)
    assert list(report.stage_seconds) == ["parse", "chunk", "tokenize", "encode", "pool", "pack states", "keys",
                                          "write rows", "statistics"]
    spent = {name for name, seconds in report.stage_seconds.items() if seconds > 0}
    assert {"parse", "chunk", "tokenize", "encode", "write rows"} <= spent
    assert report.stage_seconds["encode"] < report.seconds
    assert "by stage: " in report.summary() and "encode " in report.summary()


@pytest.mark.django_db
def test_reingest_is_idempotent_and_replaces_exactly_what_changed(
    acme: Cast, encoder: Encoder, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    folder = build_folder(tmp_path)
    ingest_paths(tenant=acme.tenant, paths=[folder], encoder=encoder)
    before = {c["id"]: c for c in stored_chunks(acme.tenant)}

    again = ingest_paths(tenant=acme.tenant, paths=[folder], encoder=encoder)
    assert (again.added, again.changed, again.unchanged, again.archived, again.chunks) == (0, 0, 5, 0, 0)
    assert {c["id"] for c in stored_chunks(acme.tenant)} == set(before)

    (folder / "guides" / "webhooks.md").write_text("# Webhooks\n\n## Retries\n\nRetried 8 times now.\n")
    RETIRED.clear()
    with listening(), django_capture_on_commit_callbacks(execute=True):
        changed = ingest_paths(tenant=acme.tenant, paths=[folder], encoder=encoder)
    assert (changed.added, changed.changed, changed.unchanged) == (0, 1, 4)
    docs = documents(acme.tenant)
    webhook_id = docs[("doc", "guides/webhooks")].pk
    old_webhook_chunks = sorted(i for i, c in before.items() if c["document_id"] == webhook_id)
    replaced = [event for event in RETIRED if event["chunk_ids"]]
    assert replaced[0]["chunk_ids"] == old_webhook_chunks
    after = {c["id"]: c for c in stored_chunks(acme.tenant)}
    untouched = {i for i, c in before.items() if c["document_id"] != webhook_id}
    assert untouched <= set(after)  # other documents keep their chunk ids
    assert not set(old_webhook_chunks) & set(after)
    assert_statistics_match_chunks(acme.tenant)


@pytest.mark.django_db
def test_bad_files_are_reported_and_nothing_stored_is_lost(acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    folder = build_folder(tmp_path)
    ingest_paths(tenant=acme.tenant, paths=[folder], encoder=encoder)
    webhooks_before = [c for c in stored_chunks(acme.tenant) if "Webhooks" in c["heading_path"]]
    (folder / "guides" / "webhooks.md").write_bytes(b"\xff\xfe not utf-8 \x00")
    (folder / "empty.md").write_text("")
    (folder / "huge.txt").write_text("x" * 2000)
    with override_settings(INGEST_MAX_FILE_BYTES=1000):
        report = ingest_paths(tenant=acme.tenant, paths=[folder, tmp_path / "missing"], prune=True, encoder=encoder)
    reasons = dict(report.failed)
    assert "binary" in reasons[str(folder / "guides" / "webhooks.md")]
    assert "empty" in reasons[str(folder / "empty.md")]
    assert "limit" in reasons[str(folder / "huge.txt")]
    assert "no such file" in reasons[str(tmp_path / "missing")]
    assert not report.ok
    docs = documents(acme.tenant)
    assert docs[("doc", "guides/webhooks")].status == "active"  # a broken file is not "gone"
    assert [c for c in stored_chunks(acme.tenant) if "Webhooks" in c["heading_path"]] == webhooks_before


@pytest.mark.django_db
def test_prune_archives_documents_gone_from_the_folder(acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    folder = build_folder(tmp_path)
    ingest_paths(tenant=acme.tenant, paths=[folder], encoder=encoder)
    (folder / "internal" / "runbook.md").unlink()
    kept = ingest_paths(tenant=acme.tenant, paths=[folder], encoder=encoder)
    assert kept.archived == 0 and documents(acme.tenant)[("doc", "internal/runbook")].status == "active"
    pruned = ingest_paths(tenant=acme.tenant, paths=[folder], prune=True, encoder=encoder)
    assert pruned.archived == 1
    assert documents(acme.tenant)[("doc", "internal/runbook")].status == "archived"
    live = stored_chunks(acme.tenant, include_archived=False)
    assert not [c for c in live if "extension 4412" in c["content"]]
    assert_statistics_match_chunks(acme.tenant)


@pytest.mark.django_db
def test_entries_and_frontmatter_audience(acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    (tmp_path / "tickets.json").write_text(json.dumps([
        {"id": "T-1", "subject": "SSO loop", "question": "Login loops", "resolution": "Clear cookies",
         "resolved_at": "2025-02-01", "audience": "customer"},
    ]))
    report = ingest_paths(tenant=acme.tenant, paths=[tmp_path / "tickets.json"], encoder=encoder)
    assert report.added == 1
    ticket = documents(acme.tenant)[("ticket", "T-1")]
    assert ticket.audience_id == acme.customer_id and str(ticket.effective_date) == "2025-02-01"


@pytest.mark.django_db
def test_contextual_blurbs_are_embedded_but_text_stays_verbatim(acme: Cast, encoder: Encoder,
                                                                tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Alpha\n\nAlpha body text.\n")
    with override_settings(CORPUS_CONTEXTUALIZER="corpus.tests.test_ingest.fake_contextualizer"):
        ingest_paths(tenant=acme.tenant, paths=[tmp_path / "a.md"], encoder=encoder)
    [chunk] = stored_chunks(acme.tenant)
    assert chunk["content"] == "Alpha\n\nAlpha body text."
    assert chunk["context_blurb"] == "From the Alpha page."


def fake_contextualizer(*, document: Any, chunks: list[str], tenant: Any = None) -> list[str]:
    return [f"From the {document.title} page." for _ in chunks]


@pytest.mark.django_db
def test_command_errors_are_clear(acme: Cast, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist .*--create-tenant"):
        call_command("ingest", str(tmp_path), tenant="nope")
    with pytest.raises(CommandError, match="no audience 'vip'"):
        call_command("ingest", str(tmp_path), tenant="acme", audience="vip")


@pytest.mark.django_db
def test_command_creates_a_tenant_in_the_language_given(acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    (tmp_path / "wifi.md").write_text("# Bezdrátová síť\n\nPřipojení k bezdrátové síti.\n", encoding="utf-8")
    call_command("ingest", str(tmp_path), tenant="napoveda", create_tenant=True, language="cs", no_progress=True)
    czech = Tenant.objects.get(slug="napoveda")
    assert (czech.language, czech.text_search_config) == ("cs", "simple")
    [chunk] = stored_chunks(czech)
    assert chunk["heading_path"] == "Bezdrátová síť"
    call_command("ingest", str(tmp_path), tenant="plain", create_tenant=True, no_progress=True)
    plain = Tenant.objects.get(slug="plain")
    assert (plain.language, plain.text_search_config) == ("en", "english")
    # An existing tenant keeps its language: documents keyed for another are refused, not stored.
    with pytest.raises(CommandError, match="exists with language 'en', not 'cs'"):
        call_command("ingest", str(tmp_path), tenant="acme", create_tenant=True, language="cs")
    assert stored_chunks(acme.tenant) == []
    call_command("ingest", str(tmp_path), tenant="napoveda", language="cs", no_progress=True)
