"""The worker `make run` starts (`manage.py db_worker`) runs a scheduled website sync when its
time has come and leaves the next one, queued for tomorrow, waiting (issue 19 item 3)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from corpus.models import WebSource
from corpus.tests.websync_site import Page, Site, html, serve
from corpus.sources.websync.sources import websource_save
from corpus.sources.websync.tasks import websync_task
from tenants import actions
from tenants.models import Audience
from tenants.rls import tenant_context

pytestmark = pytest.mark.slow  # a worker process loads the encoder
ROOT = Path(__file__).resolve().parents[2]


def test_the_worker_runs_a_scheduled_sync_and_the_next_waits(django_db_setup: Any, django_db_blocker: Any,
                                                              settings: Any) -> None:
    settings.WEBSYNC_ALLOW_PRIVATE_ADDRESSES = True  # the save-time check, in this process
    site = Site()
    site.pages["/"] = Page(body=html("Home", "Worker-synced anvils ship on Mondays."))
    with serve(site):
        with django_db_blocker.unblock():  # committed: the worker is another process
            tenant, _ = actions.tenant_get_or_create(slug=f"websync-{uuid.uuid4().hex[:8]}")
            audience = Audience.objects.get(tenant=tenant, slug="public")
            source = websource_save(tenant=tenant, audience=audience,
                                    values={"start_url": f"{site.base}/", "kind": "start", "page_limit": 5,
                                            "schedule": "daily"})
        worker = subprocess.run(
            [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay"], cwd=ROOT,
            env={**os.environ, "WEBSYNC_ALLOW_PRIVATE_ADDRESSES": "1", "WEBSYNC_DELAY_SECONDS": "0"},
            capture_output=True, text=True, timeout=600)
        assert worker.returncode == 0, worker.stderr[-2000:]
    assert site.requests["/"] == 1
    with django_db_blocker.unblock():
        with tenant_context(tenant.id):
            after = WebSource.objects.get(tenant=tenant, pk=source.pk)
        waiting = [r for r in DBTaskResult.objects.filter(task_path=websync_task.module_path, status="READY")
                   if r.args_kwargs["kwargs"].get("source_id") == source.pk]
    assert after.last_report is not None and after.next_run_at is not None, after.last_error
    assert after.last_status == "succeeded" and after.last_report["added"] == 1, after.last_error
    assert dt.timedelta(hours=23) < after.next_run_at - timezone.now() <= dt.timedelta(days=1)
    assert [r.run_after for r in waiting] == [after.next_run_at]
