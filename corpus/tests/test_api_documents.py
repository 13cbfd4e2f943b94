"""POST /api/v1/documents and GET /api/v1/jobs/{id}: upload → ingest job, isolation, limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from conftest import Cast
from corpus.models import IngestJob
from corpus.tests.helpers import documents
from tenants import actions

IMMEDIATE = override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}})


def key(cast: Cast, audiences: tuple[str, ...] = ("public",)) -> dict[str, str]:
    issued = actions.api_key_create(tenant=cast.tenant, name="uploader", audience_slugs=audiences)
    return {"Authorization": f"Bearer {issued.raw_key}"}


def upload(client: Client, headers: dict[str, str], *files: SimpleUploadedFile, **form: str) -> Any:
    return client.post("/api/v1/documents", data={"files": list(files), **form}, headers=headers)


@pytest.fixture(autouse=True)
def media(tmp_path: Path, settings: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path)


@pytest.mark.django_db
def test_upload_creates_a_job_that_ingests_into_the_keys_tenant(acme: Cast, globex: Cast, client: Client,
                                                               django_capture_on_commit_callbacks: Any) -> None:
    headers = key(acme)
    with IMMEDIATE, django_capture_on_commit_callbacks(execute=True):
        response = upload(client, headers, SimpleUploadedFile("setup.md", b"# Setup\n\nInstall the agent.\n"),
                          tenant="globex")
    assert response.status_code == 202, response.content
    job_id = response.json()["id"]
    assert response.json()["file_names"] == ["setup.md"]
    polled = client.get(f"/api/v1/jobs/{job_id}", headers=headers)
    assert polled.status_code == 200 and polled.json()["status"] == "succeeded"
    assert polled.json()["report"]["added"] == 1
    assert ("doc", "setup") in documents(acme.tenant)
    assert ("doc", "setup") not in documents(globex.tenant)  # a form field cannot choose the tenant


@pytest.mark.django_db
def test_a_job_of_another_tenant_is_404_like_a_missing_one(acme: Cast, globex: Cast, client: Client) -> None:
    response = upload(client, key(acme), SimpleUploadedFile("a.md", b"# A\n\ntext\n"))
    job_id = response.json()["id"]
    for missing in (job_id, job_id + 10_000, 2**70):
        answer = client.get(f"/api/v1/jobs/{missing}", headers=key(globex))
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"
        assert "acme" not in answer.content.decode()
    assert IngestJob.objects.get(pk=job_id).tenant_id == acme.tenant.id


@pytest.mark.django_db
def test_a_key_cannot_upload_into_an_audience_it_cannot_read(acme: Cast, client: Client) -> None:
    response = upload(client, key(acme, ("public",)), SimpleUploadedFile("i.md", b"# I\n\nsecret\n"),
                      audience="internal")
    assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"
    assert not IngestJob.objects.filter(tenant=acme.tenant).exists()
    ok = upload(client, key(acme, ("public", "internal")), SimpleUploadedFile("i.md", b"# I\n\nsecret\n"),
                audience="internal")
    assert ok.status_code == 202


@pytest.mark.django_db
def test_a_file_over_the_byte_limit_is_413_and_nothing_is_stored(acme: Cast, client: Client, settings: Any) -> None:
    settings.INGEST_MAX_FILE_BYTES = 100
    response = upload(client, key(acme), SimpleUploadedFile("big.md", b"x" * 101))
    assert response.status_code == 413 and response.json()["error"]["code"] == "payload_too_large"
    assert not IngestJob.objects.filter(tenant=acme.tenant).exists()


@pytest.mark.django_db
def test_too_many_files_in_one_upload_is_413(acme: Cast, client: Client) -> None:
    files = [SimpleUploadedFile(f"f{i}.md", b"# F\n\nx\n") for i in range(21)]
    response = upload(client, key(acme), *files)
    assert response.status_code == 413 and response.json()["error"]["code"] == "payload_too_large"


@pytest.mark.django_db
def test_bad_uploads_are_json_errors(acme: Cast, client: Client) -> None:
    headers = key(acme)
    no_files = client.post("/api/v1/documents", data={"audience": "public"}, headers=headers)
    assert no_files.status_code == 422 and no_files.json()["error"]["code"] == "invalid_request"
    bad_type = upload(client, headers, SimpleUploadedFile("a.md", b"# A\n"), source_type="movie")
    assert bad_type.status_code == 422 and "source_type" in bad_type.json()["error"]["message"]
    unauthenticated = upload(client, {}, SimpleUploadedFile("a.md", b"# A\n"))
    assert unauthenticated.status_code == 401 and unauthenticated.json()["error"]["code"] == "invalid_api_key"


# -- the document lifecycle endpoints (issue 19 item 2) -----------------------------------------

@pytest.fixture
def corpus_pages(acme: Cast, tmp_path: Path) -> dict[str, int]:
    from corpus.ingest.flow import ingest_paths

    public, internal = tmp_path / "public", tmp_path / "internal"
    (public / "guides").mkdir(parents=True)
    internal.mkdir()
    (public / "billing.md").write_text("# Billing\n\nInvoices are sent on the first day of each month.\n")
    (public / "guides" / "setup.md").write_text("# Setup\n\nInstall the agent with pip.\n")
    (internal / "margins.md").write_text("# Margins\n\nThe anvil margin is forty percent.\n")
    assert ingest_paths(tenant=acme.tenant, paths=[public]).ok
    assert ingest_paths(tenant=acme.tenant, paths=[internal], audience="internal").ok
    return {slug: d.pk for (_, slug), d in documents(acme.tenant).items()}


def _state(cast: Cast, slug: str) -> str:
    return documents(cast.tenant)[("doc", slug)].status


@pytest.mark.django_db
def test_the_list_is_paged_filtered_and_holds_only_the_keys_audiences(acme: Cast, corpus_pages: dict[str, int],
                                                                      client: Client) -> None:
    public = key(acme)
    body = client.get("/api/v1/documents", headers=public).json()
    assert body["total"] == 2 and {d["slug"] for d in body["documents"]} == {"billing", "guides/setup"}
    everything = key(acme, ("public", "internal"))
    assert client.get("/api/v1/documents", headers=everything).json()["total"] == 3
    page = client.get("/api/v1/documents?limit=1&offset=1", headers=everything).json()
    assert page["total"] == 3 and len(page["documents"]) == 1 and page["offset"] == 1
    internal = client.get("/api/v1/documents?audience=internal", headers=everything).json()
    assert [d["slug"] for d in internal["documents"]] == ["margins"]
    assert client.get("/api/v1/documents?audience=internal", headers=public).json()["total"] == 0
    client.post("/api/v1/documents/billing/archive", headers=public)
    archived = client.get("/api/v1/documents?status=archived", headers=public).json()
    assert [(d["slug"], d["status"]) for d in archived["documents"]] == [("billing", "archived")]
    assert client.get("/api/v1/documents?status=live&type=doc", headers=public).json()["total"] == 1
    assert client.get("/api/v1/documents?type=ticket", headers=public).json()["total"] == 0
    bad = client.get("/api/v1/documents?status=gone", headers=public)
    assert bad.status_code == 422 and "status" in bad.json()["error"]["message"]


@pytest.mark.django_db
def test_a_document_reads_with_its_state_and_origin(acme: Cast, corpus_pages: dict[str, int], client: Client) -> None:
    from corpus.ingest.store import tag_contested

    tag_contested(tenant=acme.tenant, document_ids=[corpus_pages["billing"]], match="invoices")
    body = client.get("/api/v1/documents/billing", headers=key(acme)).json()
    assert body["status"] == "live" and body["contested"] is True and body["audience"] == "public"
    # The ingest command's reference is a server path: the API shows the file's name only.
    assert body["origin"] == "command" and body["origin_ref"] == "billing.md"
    nested = client.get("/api/v1/documents/guides/setup", headers=key(acme))
    assert nested.status_code == 200 and nested.json()["contested"] is False
    contested = client.get("/api/v1/documents?status=contested", headers=key(acme)).json()
    assert [d["slug"] for d in contested["documents"]] == ["billing"]


@pytest.mark.django_db
def test_a_slug_with_a_folder_is_archived_restored_and_deleted(acme: Cast, corpus_pages: dict[str, int],
                                                               client: Client) -> None:
    headers = key(acme)
    archived = client.post("/api/v1/documents/guides/setup/archive", headers=headers)
    assert archived.status_code == 200 and archived.json()["status"] == "archived"
    assert _state(acme, "guides/setup") == "archived"
    restored = client.post("/api/v1/documents/guides/setup/restore?type=doc", headers=headers)
    assert restored.status_code == 200 and restored.json()["status"] == "live"
    deleted = client.delete("/api/v1/documents/guides/setup", headers=headers)
    assert deleted.status_code == 204 and deleted.content == b""
    assert ("doc", "guides/setup") not in documents(acme.tenant)
    assert client.get("/api/v1/documents/guides/setup", headers=headers).status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "suffix"), [("get", ""), ("delete", ""), ("post", "/archive"),
                                                ("post", "/restore")])
def test_another_tenants_slug_and_an_audience_the_key_lacks_are_the_same_404(
        acme: Cast, globex: Cast, corpus_pages: dict[str, int], client: Client, method: str, suffix: str) -> None:
    missing = getattr(client, method)(f"/api/v1/documents/no-such-page{suffix}", headers=key(acme)).json()
    assert missing == {"error": {"code": "not_found", "message": "no document 'no-such-page'"}}
    for slug, headers in (("billing", key(globex)), ("margins", key(acme, ("public", "customer")))):
        response = getattr(client, method)(f"/api/v1/documents/{slug}{suffix}", headers=headers)
        assert response.status_code == 404
        assert response.json() == {"error": {"code": "not_found", "message": f"no document '{slug}'"}}
    assert _state(acme, "billing") == "active" and _state(acme, "margins") == "active"


@pytest.mark.django_db
def test_two_types_sharing_a_slug_need_a_type_and_supersession_conflicts_are_409(
        acme: Cast, corpus_pages: dict[str, int], client: Client) -> None:
    from corpus.models import Document
    from corpus.ingest.store import archive_documents
    from tenants.writer import ChunkWriter

    billing = documents(acme.tenant)[("doc", "billing")]
    with ChunkWriter(tenant_id=acme.tenant.id).rls_context():
        Document.objects.create(tenant=acme.tenant, audience_id=billing.audience_id, source_type="ticket",
                                slug="billing", title="Billing ticket", content_hash="0" * 64)
    headers = key(acme)
    ambiguous = client.get("/api/v1/documents/billing", headers=headers)
    assert ambiguous.status_code == 409 and ambiguous.json()["error"]["code"] == "ambiguous"
    assert "doc, ticket" in ambiguous.json()["error"]["message"]
    assert client.get("/api/v1/documents/billing?type=ticket", headers=headers).json()["type"] == "ticket"
    archive_documents(tenant=acme.tenant, document_ids=[billing.pk], superseded_by=corpus_pages["guides/setup"])
    refused = client.post("/api/v1/documents/billing/restore?type=doc", headers=headers)
    assert refused.status_code == 409 and "superseded by a newer version" in refused.json()["error"]["message"]
    assert client.get("/api/v1/documents/billing?type=doc", headers=headers).json()["status"] == "superseded"


@pytest.mark.django_db
def test_the_lifecycle_endpoints_need_a_key(client: Client) -> None:
    for response in (client.get("/api/v1/documents"), client.delete("/api/v1/documents/x"),
                     client.post("/api/v1/documents/x/archive")):
        assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_api_key"


@pytest.mark.django_db
def test_a_repeated_query_parameter_is_refused_by_name(acme: Cast, client: Client) -> None:
    # schemathesis sent audience as an array; the last value used to be read silently.
    response = client.get("/api/v1/documents?audience=public&audience=internal", headers=key(acme))
    assert response.status_code == 422 and "'audience' given more than once" in response.json()["error"]["message"]
    detail = client.get("/api/v1/documents/x?type=doc&type=pdf", headers=key(acme))
    assert detail.status_code == 422 and "'type'" in detail.json()["error"]["message"]


@pytest.mark.django_db
def test_a_job_is_read_only_by_a_key_holding_every_audience_its_writer_held(acme: Cast, client: Client) -> None:
    """Issue 45 item 2: a job's report names what its writer could read, so a job into `public`
    queued by a key that also holds `internal` is a 404 to a public-only key; the wider key reads
    the narrower key's job."""
    wide, narrow = key(acme, ("public", "internal")), key(acme, ("public",))
    by_wide = upload(client, wide, SimpleUploadedFile("wide.md", b"# W\n\ntext\n"), audience="public").json()["id"]
    by_narrow = upload(client, narrow, SimpleUploadedFile("narrow.md", b"# N\n\ntext\n")).json()["id"]
    hidden = client.get(f"/api/v1/jobs/{by_wide}", headers=narrow)
    assert hidden.status_code == 404 and "wide.md" not in hidden.content.decode()
    assert hidden.json() == {"error": {"code": "not_found", "message": f"no job {by_wide}"}}
    assert client.get(f"/api/v1/jobs/{by_wide}", headers=wide).json()["file_names"] == ["wide.md"]
    assert client.get(f"/api/v1/jobs/{by_narrow}", headers=wide).json()["file_names"] == ["narrow.md"]
    # Another key of the same audiences reads it: the rule is the audiences, not the key.
    assert client.get(f"/api/v1/jobs/{by_narrow}", headers=key(acme, ("public",))).status_code == 200
