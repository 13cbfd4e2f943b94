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
