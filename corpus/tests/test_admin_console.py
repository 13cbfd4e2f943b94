"""Documents, chunks (read through the tenant scope), ingest jobs, cache entries and eval runs in
the console: each agent sees their own tenant's rows within their audiences; uploads are for
tenant admins, into audiences they hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from answering.tests.console_data import staff_client
from cachelayer import service as cache
from corpus.encoders.embedding import get_encoder
from corpus.ingest.flow import ingest_paths
from corpus.sources.jobs import ingest_job_create
from corpus.models import Document, IngestJob
from evaluation.runner import eval_run_store
from tenants.rls import rls_transaction

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("uploads_in_tmp")]
ACME_PUBLIC = "Acme anvils ship in crates of twelve."
ACME_INTERNAL = "Internal: the anvil margin is forty percent."
GLOBEX_PUBLIC = "Globex reagents ship chilled."


def ingest(cast: Any, folder: Path, audience: str, files: dict[str, str]) -> dict[str, int]:
    folder.mkdir()
    for slug, text in files.items():
        (folder / f"{slug}.md").write_text(f"# {slug}\n\n{text}\n")
    assert ingest_paths(tenant=cast.tenant, paths=[folder], audience=audience).ok
    with rls_transaction(tenant_id=cast.tenant.id, all_audiences=True):
        return dict(Document.objects.filter(tenant=cast.tenant, slug__in=list(files)).values_list("slug", "id"))


@pytest.fixture
def docs(acme: Any, globex: Any, tmp_path: Path) -> dict[str, int]:
    return {
        **ingest(acme, tmp_path / "a", "public", {"acme-anvils": ACME_PUBLIC}),
        **ingest(acme, tmp_path / "b", "internal", {"acme-margins": ACME_INTERNAL}),
        **ingest(globex, tmp_path / "c", "public", {"globex-reagents": GLOBEX_PUBLIC}),
    }


def test_documents_are_listed_per_tenant_and_audience(acme: Any, docs: dict[str, int]) -> None:
    listing = staff_client(acme.agent).get("/admin/corpus/document/").content.decode()
    assert "acme-anvils" in listing
    assert "acme-margins" not in listing  # internal: not one of the agent's audiences
    assert "globex-reagents" not in listing
    assert "acme-margins" in staff_client(acme.owner).get("/admin/corpus/document/").content.decode()
    assert "acme-anvils" not in staff_client(acme.outsider).get("/admin/corpus/document/").content.decode()


def test_chunk_text_is_read_through_the_scope_with_the_agents_audiences(acme: Any, docs: dict[str, int]) -> None:
    agent = staff_client(acme.agent)  # public + customer
    page = agent.get(f"/admin/corpus/document/{docs['acme-anvils']}/change/").content.decode()
    assert ACME_PUBLIC in page and 'id="document-chunks"' in page
    internal = agent.get(f"/admin/corpus/document/{docs['acme-margins']}/change/")
    assert internal.status_code == 404
    assert ACME_INTERNAL not in internal.content.decode() and "acme-margins" not in internal.content.decode()
    owner = staff_client(acme.owner)  # has the internal audience
    assert ACME_INTERNAL in owner.get(f"/admin/corpus/document/{docs['acme-margins']}/change/").content.decode()


def test_another_tenants_document_is_a_404(acme: Any, docs: dict[str, int]) -> None:
    response = staff_client(acme.owner).get(f"/admin/corpus/document/{docs['globex-reagents']}/change/")
    assert response.status_code == 404
    assert GLOBEX_PUBLIC not in response.content.decode()


def test_ingest_jobs_are_listed_per_tenant(acme: Any, globex: Any) -> None:
    mine = ingest_job_create(tenant=acme.tenant, files=[SimpleUploadedFile("acme-upload.md", b"# A\n\ntext\n")],
                             writer_audiences=["public"])
    internal = ingest_job_create(tenant=acme.tenant, files=[SimpleUploadedFile("acme-secret.md", b"# S\n\nx\n")],
                                 audience="internal", writer_audiences=["public", "customer", "internal"])
    theirs = ingest_job_create(tenant=globex.tenant, files=[SimpleUploadedFile("globex-upload.md", b"# G\n\nx\n")],
                               writer_audiences=["public"])
    agent = staff_client(acme.agent)
    listing = agent.get("/admin/corpus/ingestjob/").content.decode()
    assert f"/admin/corpus/ingestjob/{mine.pk}/change/" in listing
    assert f"/admin/corpus/ingestjob/{theirs.pk}/change/" not in listing
    assert f"/admin/corpus/ingestjob/{internal.pk}/change/" not in listing  # wrote into internal
    assert agent.get(f"/admin/corpus/ingestjob/{theirs.pk}/change/").status_code == 404
    assert agent.get(f"/admin/corpus/ingestjob/{internal.pk}/change/").status_code == 404
    assert f"/admin/corpus/ingestjob/{internal.pk}/change/" in staff_client(acme.owner).get(
        "/admin/corpus/ingestjob/").content.decode()
    # the upload form offers only the owner's own tenant
    form = staff_client(acme.owner).get("/admin/corpus/ingestjob/add/").content.decode()
    assert f'value="{acme.tenant.id}"' in form and f'value="{globex.tenant.id}"' not in form


def test_only_tenant_admins_upload(acme: Any) -> None:
    agent = staff_client(acme.agent)
    assert agent.get("/admin/corpus/ingestjob/add/").status_code == 403
    response = agent.post("/admin/corpus/ingestjob/add/", {
        "tenant": acme.tenant.id, "audience": "public", "source_type": "doc",
        "files": SimpleUploadedFile("agent.md", b"# Agent\n\ntext\n")})
    assert response.status_code == 403
    assert not IngestJob.objects.filter(tenant=acme.tenant).exists()


def test_upload_form_offers_and_accepts_only_the_admins_audiences(acme: Any) -> None:
    from django.contrib.auth import get_user_model

    from tenants import actions

    narrow = get_user_model().objects.create_user("acme-narrow-owner", password="pw")
    actions.membership_grant(tenant=acme.tenant, user=narrow, role="owner", audience_slugs=["public", "customer"])
    owner = staff_client(narrow)
    form = owner.get("/admin/corpus/ingestjob/add/").content.decode()
    assert 'value="customer"' in form and 'value="internal"' not in form
    forged = owner.post("/admin/corpus/ingestjob/add/", {
        "tenant": acme.tenant.id, "audience": "internal", "source_type": "doc",
        "files": SimpleUploadedFile("forged.md", b"# Forged\n\ntext\n")})
    assert forged.status_code == 200 and "errorlist" in forged.content.decode()
    assert not IngestJob.objects.filter(tenant=acme.tenant).exists()
    accepted = owner.post("/admin/corpus/ingestjob/add/", {
        "tenant": acme.tenant.id, "audience": "customer", "source_type": "doc",
        "files": SimpleUploadedFile("fine.md", b"# Fine\n\ntext\n")})
    assert accepted.status_code == 302, accepted.content.decode()[:3000]
    job = IngestJob.objects.get(tenant=acme.tenant)
    assert (job.audience, sorted(job.writer_audiences)) == ("customer", ["customer", "public"])


def test_cache_entries_are_listed_per_tenant(acme: Any, globex: Any) -> None:
    vector = get_encoder().encode_one("how long does anvil shipping take")
    for cast, query in ((acme, "acme anvil shipping time"), (globex, "globex reagent shipping time")):
        cache.store(tenant_id=cast.tenant.id, audience_ids=[cast.public_id], query=query, query_vector=vector,
                    generator="extractive", answer="answer", sources=[], conflict=False, provider="", model="",
                    trace_id=None, cost_usd=0.0, chunk_ids=[])
    listing = staff_client(acme.agent).get("/admin/cachelayer/cacheentry/").content.decode()
    assert "acme anvil shipping time" in listing
    assert "globex reagent shipping time" not in listing


def test_eval_runs_are_listed_per_tenant(acme: Any, globex: Any) -> None:
    eval_run_store(tenant=acme.tenant, report={"golden": "acme-golden-set", "arms": {}})
    other = eval_run_store(tenant=globex.tenant, report={"golden": "globex-golden-set", "arms": {}})
    owner = staff_client(acme.owner)  # holds every audience: eval runs read with all of them
    listing = owner.get("/admin/evaluation/evalrun/").content.decode()
    assert "acme-golden-set" in listing and "globex-golden-set" not in listing
    assert owner.get(f"/admin/evaluation/evalrun/{other.pk}/change/").status_code == 404
    assert "acme-golden-set" not in staff_client(acme.agent).get("/admin/evaluation/evalrun/").content.decode()
