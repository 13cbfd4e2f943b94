"""Real processes: an ingest killed with SIGKILL midway, and two ingests of one tenant at once."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from corpus.ingest import store
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.tests.helpers import documents, stored_chunks
from tenants import actions
from tenants.models import Tenant

ROOT = Path(__file__).resolve().parents[2]
DOCS = 30


def write_docs(folder: Path, version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(DOCS):
        body = " ".join(f"Paragraph {p} of document {i} in {version} explains setting number {p}." for p in range(40))
        (folder / f"doc-{i:02d}.md").write_text(f"# Document {i}\n\n## Part\n\n{body}\n")


def ingest_process(folder: Path, tenant: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "manage.py", "ingest", "--tenant", tenant, "--no-progress", str(folder)],
        cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def consistent_state(tenant: Tenant) -> dict[str, str]:
    """Every document's chunks are all of one version and match its chunk_count; returns slug → version."""
    docs = documents(tenant)
    chunks = stored_chunks(tenant)
    versions: dict[str, str] = {}
    for (_, slug), doc in docs.items():
        mine = [c for c in chunks if c["document_id"] == doc.pk]
        assert len(mine) == doc.chunk_count, f"{slug}: {len(mine)} chunks stored, document says {doc.chunk_count}"
        assert [c["ordinal"] for c in mine] == list(range(len(mine)))
        seen = {("v2" if " in v2 " in c["content"] else "v1") for c in mine}
        assert len(seen) == 1, f"{slug} mixes versions {seen}"
        versions[slug] = seen.pop()
    assert {c["document_id"] for c in chunks} <= {d.pk for d in docs.values()}, "orphan chunks"
    return versions


@pytest.mark.slow
def test_sigkill_midway_keeps_old_versions_and_rerun_completes(
    django_db_setup: Any, django_db_blocker: Any, encoder: Encoder, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    slug = f"kill-{uuid.uuid4().hex[:8]}"
    with django_db_blocker.unblock():
        tenant = actions.tenant_create(slug=slug, name="Kill test")
        write_docs(folder, "v1")
        assert ingest_paths(tenant=tenant, paths=[folder], encoder=encoder).added == DOCS
        write_docs(folder, "v2")
        process = ingest_process(folder, slug, INGEST_ENCODE_WINDOW="1")
        deadline = time.monotonic() + 180
        killed_at = None
        while time.monotonic() < deadline and process.poll() is None:
            done = sum(1 for v in consistent_state(tenant).values() if v == "v2")
            if done >= 3:
                process.kill()  # SIGKILL: no cleanup handlers, no rollback by the client
                killed_at = done
                break
            time.sleep(0.05)
        process.wait(timeout=30)
        assert killed_at is not None, "the ingest finished before it could be killed; make the corpus bigger"
        midway = consistent_state(tenant)
        assert 3 <= sum(v == "v2" for v in midway.values()) < DOCS, midway
        assert len(midway) == DOCS

        rerun = ingest_process(folder, slug)
        out, err = rerun.communicate(timeout=300)
        assert rerun.returncode == 0, err
        final = consistent_state(tenant)
        assert set(final.values()) == {"v2"} and len(final) == DOCS
        assert all(d.status == "active" for d in documents(tenant).values())
        assert f"{DOCS - sum(v == 'v2' for v in midway.values())} changed" in out


@pytest.mark.slow
def test_two_ingests_of_one_tenant_are_serialised(
    django_db_setup: Any, django_db_blocker: Any, tmp_path: Path
) -> None:
    slug = f"lock-{uuid.uuid4().hex[:8]}"
    (tmp_path / "a.md").write_text("# A\n\nText.\n")
    with django_db_blocker.unblock():
        tenant = actions.tenant_create(slug=slug, name="Lock test")
        with store.tenant_ingest_lock(tenant=tenant, wait=False):
            process = ingest_process(tmp_path, slug)
            lines: list[str] = []
            stderr = process.stderr
            assert stderr is not None  # stderr=PIPE
            reader = threading.Thread(target=lambda: lines.extend(stderr), daemon=True)
            reader.start()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not any("waiting for it to finish" in line for line in lines):
                time.sleep(0.1)
            assert any(f"another ingest of tenant {slug} is running" in line for line in lines), lines
            time.sleep(0.5)
            assert process.poll() is None, "the second ingest must wait while the first holds the lock"
        assert process.wait(timeout=120) == 0
        assert ("doc", "a") in documents(tenant)

