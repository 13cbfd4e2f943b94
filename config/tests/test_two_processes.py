"""Two app processes behind one load balancer share everything but the model (docs/decisions/0049).

Two uvicorn processes serve the same database. A key's per-minute limit is one counter
however the requests are spread over them (tenants_ratelimit in PostgreSQL); an upload taken
by one process is a job the other reports, run by a worker process of its own, which reads
the files from the shared upload storage (STORAGES["default"], here a directory all three
mount) and not from the disk of the process that took them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from config.liveserver import serve

pytestmark = pytest.mark.slow  # two uvicorn processes and a worker
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    media: Path
    limited_key: str
    upload_key: str


@pytest.fixture(scope="module")
def pair(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    from tenants import actions

    with django_db_blocker.unblock():
        tenant, _ = actions.tenant_get_or_create(slug=f"h21-two-{uuid.uuid4().hex[:8]}")
        limited = actions.api_key_create(tenant=tenant, name="limited", rate_limit_per_minute=4).raw_key
        uploader = actions.api_key_create(tenant=tenant, name="uploader").raw_key
    media = tmp_path_factory.mktemp("shared-media")
    env = {"MEDIA_ROOT": str(media), "API_RATE_LIMIT_PER_ADDRESS": "100000"}
    with serve(env) as first, serve(env) as second:
        yield Pair(first, second, media, limited, uploader)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_keys_limit_is_one_counter_across_processes(pair: Pair) -> None:
    # Windows are whole minutes of the database clock: start well inside one.
    if time.time() % 60 > 50:
        time.sleep(61 - time.time() % 60)
    statuses = []
    for url in [pair.first, pair.second] * 3:  # six requests, three on each process, limit four
        statuses.append(httpx.get(f"{url}/api/v1/jobs/999999999", headers=bearer(pair.limited_key), timeout=30)
                        .status_code)
    # Each process alone saw three requests, under the limit: a per-process counter lets all six through.
    assert statuses == [404, 404, 404, 404, 429, 429], statuses


def test_an_upload_on_one_process_is_a_job_the_other_reports_and_a_worker_runs(pair: Pair) -> None:
    files = {"files": ("setup.md", b"# Setup\n\nInstall the h21 agent with pip.\n", "text/markdown")}
    taken = httpx.post(f"{pair.first}/api/v1/documents", files=files, headers=bearer(pair.upload_key), timeout=60)
    assert taken.status_code == 202, taken.text
    job_id = taken.json()["id"]
    queued = httpx.get(f"{pair.second}/api/v1/jobs/{job_id}", headers=bearer(pair.upload_key), timeout=30)
    assert queued.status_code == 200 and queued.json()["status"] == "queued", queued.text
    stored = list(pair.media.rglob("setup.md"))
    assert len(stored) == 1  # in the shared store, under a storage name

    worker = subprocess.run(
        [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay"],
        cwd=ROOT, env={**os.environ, "MEDIA_ROOT": str(pair.media)}, capture_output=True, text=True, timeout=600,
    )
    assert worker.returncode == 0, worker.stderr[-2000:]
    done = httpx.get(f"{pair.second}/api/v1/jobs/{job_id}", headers=bearer(pair.upload_key), timeout=30).json()
    assert done["status"] == "succeeded" and done["report"]["added"] == 1, done
