from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from conftest import Cast
from corpus.sources.jobs import UploadRejected, ingest_job_create
from corpus.models import Document, IngestJob
from corpus.tests.helpers import documents
from tenants.rls import rls_transaction

IMMEDIATE = override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}})


@pytest.mark.django_db
def test_upload_runs_the_ingest_as_a_task(acme: Cast, tmp_path: Path, settings: Any,
                                          django_capture_on_commit_callbacks: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path)
    files = [SimpleUploadedFile("guides/setup.md", b"# Setup\n\nInstall the agent with pip.\n"),
             SimpleUploadedFile("../../evil.md", b"# Evil\n\nTrying to escape.\n")]
    with IMMEDIATE, django_capture_on_commit_callbacks(execute=True):
        job = ingest_job_create(tenant=acme.tenant, files=files, created_by_id=acme.owner.pk,
                                writer_audiences=["public", "customer", "internal"])
    job.refresh_from_db()
    assert job.status == "succeeded" and job.report is not None, job.error
    assert job.report["added"] == 2 and job.task_id
    assert sorted(job.file_names) == ["evil.md", "setup.md"]  # uploads arrive as base names
    # Stored under a storage name, never an absolute path of the process that took the upload.
    assert not Path(job.upload_dir).is_absolute()
    assert all(Path(tmp_path, job.upload_dir, n).resolve().is_relative_to(tmp_path) for n in job.file_names)
    assert ("doc", "setup") in documents(acme.tenant)
    # Where each document came from: the uploader's file name, not a path of the worker.
    with rls_transaction(tenant_id=acme.tenant.id, all_audiences=True):
        origins = set(Document.objects.filter(tenant=acme.tenant).values_list("origin", "origin_ref"))
    assert origins == {("upload", "setup.md"), ("upload", "evil.md")}


def test_safe_names_never_climb_out_of_the_job_folder() -> None:
    from corpus.sources.jobs import _safe_name

    assert _safe_name("../../etc/passwd") == "etc/passwd"
    assert _safe_name("guides\\win.md") == "guides/win.md"
    assert _safe_name("/abs/x.md") == "abs/x.md"
    with pytest.raises(UploadRejected):
        _safe_name("../..")


@pytest.mark.django_db
def test_bad_upload_is_refused_before_anything_is_stored(acme: Cast) -> None:
    everything = ["public", "customer", "internal", "vip"]
    with pytest.raises(UploadRejected, match="no audience 'vip'"):
        ingest_job_create(tenant=acme.tenant, files=[SimpleUploadedFile("a.md", b"# A")], audience="vip",
                          writer_audiences=everything)
    with pytest.raises(UploadRejected, match="may not write to audience 'internal'"):
        ingest_job_create(tenant=acme.tenant, files=[SimpleUploadedFile("a.md", b"# A")], audience="internal",
                          writer_audiences=["public"])
    with pytest.raises(UploadRejected, match="no files"):
        ingest_job_create(tenant=acme.tenant, files=[], writer_audiences=everything)
    assert not IngestJob.objects.filter(tenant=acme.tenant).exists()


@pytest.mark.django_db
def test_admin_upload_and_job_report(acme: Cast, globex: Cast, tmp_path: Path, settings: Any,
                                     django_capture_on_commit_callbacks: Any) -> None:
    from django.contrib.auth import get_user_model

    settings.MEDIA_ROOT = str(tmp_path)
    root = get_user_model().objects.create_superuser("root", "r@example.com", "pw")
    client = Client()
    client.force_login(root)
    assert client.get("/admin/corpus/ingestjob/add/").status_code == 200
    with IMMEDIATE, django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/corpus/ingestjob/add/", {
            "tenant": acme.tenant.pk, "audience": "public", "source_type": "doc",
            "files": [SimpleUploadedFile("faq.md", b"# FAQ\n\nWe answer within a day.\n")],
        })
    assert response.status_code == 302, response.content[:2000]
    job = IngestJob.objects.get(tenant=acme.tenant)  # other modules commit jobs of their own tenants
    page = client.get(f"/admin/corpus/ingestjob/{job.pk}/change/")
    assert b"succeeded" in page.content.lower() and b"&quot;added&quot;: 1" in page.content
    listing = client.get("/admin/corpus/ingestjob/")
    assert b"1 added" in listing.content
    # A member of another tenant does not see the job.
    globex.owner.is_staff = True
    globex.owner.save()
    from django.contrib.auth.models import Permission

    globex.owner.user_permissions.set(Permission.objects.filter(codename="view_ingestjob"))
    other = Client()
    other.force_login(globex.owner)
    assert other.get(f"/admin/corpus/ingestjob/{job.pk}/change/").status_code in (302, 404)


@pytest.mark.django_db
def test_a_jobs_report_names_files_relative_to_the_upload(acme: Cast, tmp_path: Path, settings: Any,
                                                          django_capture_on_commit_callbacks: Any) -> None:
    """Issue 45 item 7: failures and warnings name the uploader's file, never a path on the server,
    in the API's job and on the console's job page."""
    from tenants import actions

    settings.MEDIA_ROOT = str(tmp_path / "media")
    headers = {"Authorization": f"Bearer {actions.api_key_create(tenant=acme.tenant, name='u').raw_key}"}
    client = Client()
    uploads = {"doc": [SimpleUploadedFile("guides/empty.md", b""),
                       SimpleUploadedFile("sneaky.md", b"---\naudience: internal\n---\n# Sneaky\n\nPlanted.\n")],
               "ticket": [SimpleUploadedFile("tickets.json", b"[]")]}
    jobs = []
    for source_type, files in uploads.items():
        with IMMEDIATE, django_capture_on_commit_callbacks(execute=True):
            posted = client.post("/api/v1/documents", data={"files": files, "source_type": source_type},
                                 headers=headers)
        jobs.append(client.get(f"/api/v1/jobs/{posted.json()['id']}", headers=headers).json())
    failed = {f["path"] for f in jobs[0]["report"]["failed"]}
    assert failed == {"empty.md", "sneaky.md"}, jobs[0]["report"]
    assert jobs[1]["report"]["warnings"] == ["tickets.json: skipped, no entries in the file"]
    root = get_user_model().objects.create_superuser("root", "r@example.com", "pw")
    client.force_login(root)
    for job, named in zip(jobs, ("empty.md", "tickets.json")):
        page = client.get(f"/admin/corpus/ingestjob/{job['id']}/change/").content.decode()
        report = re.search(r"<pre>(.*?)</pre>", page, re.S)
        assert report is not None and f"&quot;{named}" in report.group(1), page
        for shown in (json.dumps(job), page):
            assert str(tmp_path) not in shown and str(tmp_path.resolve()) not in shown
        # No absolute path at all: a JSON string, or a warning's text, that starts at the root.
        for shown in (json.dumps(job), report.group(1).replace("&quot;", '"')):
            assert not re.search(r'"/|: /|\[/', shown), shown


@pytest.mark.django_db
def test_a_report_stored_with_server_paths_is_shown_relative(acme: Cast, tmp_path: Path, settings: Any) -> None:
    """Jobs run before issue 45 kept the worker's paths: the API and the console show them relative
    too, whether the worker read the storage's directory (a space in it) or a temporary copy."""
    from corpus.sources.jobs import ingest_job_shown

    settings.MEDIA_ROOT = str(tmp_path / "my media")
    folder = tmp_path / "my media" / "ingest" / "7-0123456789ab"
    temporary = "/tmp/ingest-k2j3/7-0123456789ab"
    job = IngestJob.objects.create(
        tenant=acme.tenant, upload_dir="ingest/7-0123456789ab", file_names=["a.md", "guides/b.md"],
        writer_audiences=["public"], error=f"ValueError: {folder}/guides/b.md is broken",
        report={"failed": [{"path": f"{folder}/a.md", "reason": "no text to index"},
                           {"path": f"{temporary}/guides/b.md#2", "reason": f"bad entry in {temporary}/guides/b.md"}],
                "warnings": [f"{folder}/c.json: skipped, no entries in the file"], "skipped_reasons": {}})
    report, error = ingest_job_shown(job)
    assert report is not None
    assert report["failed"] == [{"path": "a.md", "reason": "no text to index"},
                                {"path": "guides/b.md#2", "reason": "bad entry in guides/b.md"}]
    assert report["warnings"] == ["c.json: skipped, no entries in the file"]
    assert error == "ValueError: guides/b.md is broken"
