"""A writer holds its audiences: what an upload says about itself never widens them.

A public-only key (or a narrower staff member) uploads files that name `audience: internal`,
reuse the slug or entry id of an internal document, supersede it, or tag it through a
manifest. Each is a per-file error in the job's report, the rest of the job goes on, and
every document outside the writer's audiences is byte-for-byte what it was. The operator on
the machine (`manage.py ingest`) keeps full rights (docs/decisions/0031).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from conftest import Cast
from corpus.ingest.flow import ingest_paths
from corpus.ingest.rights import Writer
from corpus.tests.helpers import assert_stayed_inside, documents, snapshot, stored_chunks
from tenants import actions

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("uploads_in_tmp")]
IMMEDIATE = override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}})
INTERNAL_DOC = "---\ntitle: Fraud review\naudience: internal\n---\n# Fraud review\n\nEscalate chargebacks over 500 EUR to the risk desk.\n"
INTERNAL_TICKET = [{"id": "T-100", "subject": "Chargeback playbook", "question": "How do we handle chargebacks?",
                    "resolution": "The risk desk reviews every chargeback over 500 EUR.", "audience": "internal"}]


@pytest.fixture
def hidden(acme: Cast, tmp_path: Path) -> dict[tuple[str, str], tuple[Any, ...]]:
    """The operator's internal document and ticket; the snapshot every test compares against."""
    folder = tmp_path / "operator"
    folder.mkdir()
    (folder / "fraud-review.md").write_text(INTERNAL_DOC)
    tickets = tmp_path / "tickets.json"
    tickets.write_text(json.dumps(INTERNAL_TICKET))
    assert ingest_paths(tenant=acme.tenant, paths=[folder]).ok
    assert ingest_paths(tenant=acme.tenant, paths=[tickets], source_type="ticket").ok
    return snapshot(acme.tenant)


class Upload(Protocol):
    def __call__(self, cast: Cast, audiences: tuple[str, ...], *files: SimpleUploadedFile,
                 source_type: str = "doc") -> dict[str, Any]: ...


@pytest.fixture
def upload(django_capture_on_commit_callbacks: Any) -> Upload:
    """Upload files with a new key holding `audiences`; the job runs at once; its JSON comes back."""
    def run(cast: Cast, audiences: tuple[str, ...], *files: SimpleUploadedFile,
            source_type: str = "doc") -> dict[str, Any]:
        issued = actions.api_key_create(tenant=cast.tenant, name="uploader", audience_slugs=audiences)
        client, headers = Client(), {"Authorization": f"Bearer {issued.raw_key}"}
        with IMMEDIATE, django_capture_on_commit_callbacks(execute=True):
            response = client.post("/api/v1/documents", data={"files": list(files), "source_type": source_type},
                                   headers=headers)
        assert response.status_code == 202, response.content
        return client.get(f"/api/v1/jobs/{response.json()['id']}", headers=headers).json()
    return run


def reasons(job: dict[str, Any]) -> str:
    return " | ".join(f["reason"] for f in job["report"]["failed"])


def test_front_matter_audience_outside_the_key_is_a_per_file_error(acme: Cast, hidden: Any, upload: Upload) -> None:
    job = upload(acme, ("public",),
                 SimpleUploadedFile("good.md", b"# Good\n\nShipping takes two days.\n"),
                 SimpleUploadedFile("sneaky.md", b"---\naudience: internal\n---\n# Sneaky\n\nPlanted text.\n"))
    assert job["status"] == "failed" and job["report"]["added"] == 1
    assert "audience 'internal' is not one this upload may write to" in reasons(job)
    assert ("doc", "sneaky") not in documents(acme.tenant)
    assert documents(acme.tenant)[("doc", "good")].audience.slug == "public"
    assert_stayed_inside(acme.tenant, hidden, {"public"})


def test_an_audience_that_does_not_exist_is_refused_with_the_same_words(
        acme: Cast, hidden: Any, upload: Upload) -> None:
    job = upload(acme, ("public",), SimpleUploadedFile("vip.md", b"---\naudience: vip\n---\n# VIP\n\nText.\n"))
    assert "audience 'vip' is not one this upload may write to" in reasons(job)  # confirms nothing


def test_ticket_and_changelog_audience_fields_are_held_to_the_key(acme: Cast, hidden: Any, upload: Upload) -> None:
    entries = [{"id": "T-7", "subject": "Refunds", "question": "q?", "resolution": "Ten days.", "audience": "internal"},
               {"id": "T-8", "subject": "Invoices", "question": "q?", "resolution": "Monthly."}]
    job = upload(acme, ("public", "customer"), SimpleUploadedFile("t.json", json.dumps(entries).encode()),
                 source_type="ticket")
    assert job["report"]["added"] == 1 and "'internal' is not one this upload may write to" in reasons(job)
    assert ("ticket", "T-7") not in documents(acme.tenant)
    assert_stayed_inside(acme.tenant, hidden, {"public", "customer"})


def test_an_entry_id_or_slug_of_another_audience_is_never_replaced(acme: Cast, hidden: Any, upload: Upload) -> None:
    job = upload(acme, ("public",), SimpleUploadedFile("t.json", json.dumps([
        {"id": "T-100", "subject": "Chargebacks", "question": "q?", "resolution": "We never review them."}]).encode()),
        source_type="ticket")
    assert "entry id 'T-100' belongs to a document this upload may not replace" in reasons(job)
    job = upload(acme, ("public",), SimpleUploadedFile("fraud-review.md", b"# Fraud review\n\nNo review at all.\n"))
    assert "slug 'fraud-review' belongs to a document this upload may not replace" in reasons(job)
    assert_stayed_inside(acme.tenant, hidden, {"public"})


def test_supersedes_cannot_archive_a_document_outside_the_key(acme: Cast, hidden: Any, upload: Upload) -> None:
    job = upload(acme, ("public",),
                 SimpleUploadedFile("new.md", b"---\nsupersedes: fraud-review\n---\n# New\n\nNewer text.\n"))
    assert job["report"]["archived"] == 0
    assert "supersedes 'fraud-review', which is not ingested" in " ".join(job["report"]["warnings"])
    assert documents(acme.tenant)[("doc", "fraud-review")].status == "active"
    assert_stayed_inside(acme.tenant, hidden, {"public"})


def test_a_refused_file_cannot_supersede_through_the_slug_it_collided_with(
        acme: Cast, hidden: Any, tmp_path: Path, upload: Upload) -> None:
    """`fraud-review.md` is refused (the slug is internal); its `supersedes:` must not then run
    with the internal document standing in as the 'new' one and archive a public page."""
    public = tmp_path / "public"
    public.mkdir()
    (public / "faq.md").write_text("# FAQ\n\nAsk us anything.\n")
    assert ingest_paths(tenant=acme.tenant, paths=[public]).ok
    before = snapshot(acme.tenant)
    job = upload(acme, ("public",),
                 SimpleUploadedFile("fraud-review.md", b"---\nsupersedes: faq\n---\n# Fraud review\n\nx\n"))
    assert job["report"]["archived"] == 0 and documents(acme.tenant)[("doc", "faq")].status == "active"
    assert snapshot(acme.tenant) == before


def test_a_manifest_cannot_tag_documents_outside_the_key(acme: Cast, hidden: Any, upload: Upload) -> None:
    manifest = ("conflicts:\n  - id: c1\n    match: chargeback\n    documents:\n"
                "      - {slug: fraud-review}\n      - {source: ticket, id: T-100}\n")
    job = upload(acme, ("public",), SimpleUploadedFile("answerdesk-manifest.yaml", manifest.encode()),
                 SimpleUploadedFile("a.md", b"# A\n\nA chargeback page.\n"))
    assert job["report"]["contested_chunks"] == 0
    assert "documents not ingested: doc:fraud-review, ticket:T-100" in " ".join(job["report"]["warnings"])
    assert_stayed_inside(acme.tenant, hidden, {"public"})


def test_an_empty_manifest_match_is_refused_even_for_the_operator(acme: Cast, hidden: Any, tmp_path: Path) -> None:
    folder = tmp_path / "with-manifest"
    folder.mkdir()
    (folder / "fraud-review.md").write_text(INTERNAL_DOC)
    (folder / "answerdesk-manifest.yaml").write_text(
        "conflicts:\n  - id: all\n    match: ''\n    documents:\n      - {slug: fraud-review}\n")
    report = ingest_paths(tenant=acme.tenant, paths=[folder])
    assert report.failed == [("conflict all", "match is empty; name the text the documents disagree on")]
    assert report.contested_chunks == 0
    assert not any(contested for row in stored_chunks(acme.tenant) for contested in [row["contested"]])


def test_the_operator_and_a_key_holding_the_audience_keep_their_rights(
        acme: Cast, hidden: Any, tmp_path: Path, upload: Upload) -> None:
    folder = tmp_path / "ops"
    folder.mkdir()
    (folder / "risk.md").write_text("---\naudience: internal\nsupersedes: fraud-review\n---\n# Risk\n\nNew process.\n")
    report = ingest_paths(tenant=acme.tenant, paths=[folder])
    assert report.ok and report.archived == 1
    assert documents(acme.tenant)[("doc", "risk")].audience.slug == "internal"
    job = upload(acme, ("public", "customer", "internal"), SimpleUploadedFile("t.json", json.dumps([
        {"id": "T-100", "subject": "Chargebacks", "question": "q?", "resolution": "Updated.", "audience": "internal"}
    ]).encode()), source_type="ticket")
    assert job["status"] == "succeeded" and job["report"]["changed"] == 1


def test_an_ingest_may_not_default_to_an_audience_its_writer_lacks(acme: Cast, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    with pytest.raises(ValueError, match="may not write to audience 'internal'"):
        ingest_paths(tenant=acme.tenant, paths=[tmp_path / "a.md"], audience="internal",
                     writer=Writer.holding(["public"]))
    with pytest.raises(ValueError, match="for the operator"):
        ingest_paths(tenant=acme.tenant, paths=[tmp_path], prune=True, writer=Writer.holding(["public"]))


def test_forced_fail_without_the_writer_rule_the_invariant_goes_red(
        acme: Cast, hidden: Any, monkeypatch: pytest.MonkeyPatch, upload: Upload) -> None:
    """Remove the rule (every writer may write anywhere) and the same upload must trip the check."""
    monkeypatch.setattr(Writer, "may_write", lambda self, audience_slug: True)
    monkeypatch.setattr(Writer, "audience_ids", lambda self, tenant_audiences: None)
    upload(acme, ("public",),
           SimpleUploadedFile("sneaky.md", b"---\naudience: internal\nsupersedes: fraud-review\n---\n# S\n\nPlanted.\n"))
    with pytest.raises(AssertionError, match="outside|changed"):
        assert_stayed_inside(acme.tenant, hidden, {"public"})
