"""Two real `manage.py db_worker` processes on one queue (docs/decisions/0123).

Twenty jobs of a second each go to a queue of their own; two workers compete for them. One is
killed with SIGKILL while it runs a job. Every job still finishes, and finishes once: the killed
worker's job goes back to the queue when its lease dies (config/management/commands/db_worker.py)
and the other worker runs it. Forced fail: with django-tasks' own worker, which has no lease, the
killed job stays RUNNING and never finishes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUEUE = "h50-two-workers"
JOBS = 20
SECONDS = 1.0
# django-tasks' own worker command, which the project's db_worker replaces.
PLAIN = ("import sys, django; django.setup(); "
         "from django_tasks_db.management.commands.db_worker import Command; "
         "Command().run_from_argv(['manage.py', 'db_worker', *sys.argv[1:]])")


def _worker(name: str, log: Path, *, leased: bool) -> subprocess.Popen[bytes]:
    start = [sys.executable, "manage.py", "db_worker"] if leased else [sys.executable, "-c", PLAIN]
    return subprocess.Popen(
        [*start, "--queue-name", QUEUE, "--interval", "0.2", "--no-reload", "--no-startup-delay",
         "--worker-id", name],
        cwd=ROOT, env={**os.environ, "TASKS_QUEUES": f"default,{QUEUE}", "DJANGO_SETTINGS_MODULE": "config.settings"},
        stdout=log.open("wb"), stderr=subprocess.STDOUT)


def _enqueue(folder: Path) -> list[str]:
    """Rows as the backend writes them; made directly because this process's settings know no such queue."""
    from django_tasks_db.models import DBTaskResult, get_date_max

    return [str(DBTaskResult.objects.create(
        args_kwargs={"args": [], "kwargs": {"number": n, "folder": str(folder), "seconds": SECONDS}},
        task_path="config.tests.worker_jobs.recorded_job", queue_name=QUEUE, backend_name="default",
        run_after=get_date_max()).pk) for n in range(JOBS)]


def _statuses(ids: list[str]) -> dict[str, int]:
    from django.db.models import Count
    from django_tasks_db.models import DBTaskResult

    rows = DBTaskResult.objects.filter(pk__in=ids).values("status").annotate(n=Count("pk"))
    return {row["status"]: row["n"] for row in rows}


def _run(folder: Path, django_db_blocker: Any, *, leased: bool) -> dict[str, int]:
    """Enqueue, start two workers, SIGKILL the first inside a job, wait until the queue is drained
    and nothing more finishes; the jobs' statuses then."""
    folder.mkdir()
    with django_db_blocker.unblock():
        ids = _enqueue(folder)
    first = _worker(f"{folder.name}-first", folder.parent / f"{folder.name}-first.log", leased=leased)
    second = _worker(f"{folder.name}-second", folder.parent / f"{folder.name}-second.log", leased=leased)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            busy = [p for p in folder.glob("*.started")
                    if str(first.pid) in p.read_text().split() and not p.with_suffix(".done").exists()]
            if busy:
                first.send_signal(signal.SIGKILL)
                break
            time.sleep(0.05)
        else:
            pytest.fail("the first worker never started a job")
        first.wait(timeout=30)
        finished, quiet_since = -1, time.monotonic()
        while time.monotonic() < deadline:
            now = len(list(folder.glob("*.done")))
            if now != finished:
                finished, quiet_since = now, time.monotonic()
            with django_db_blocker.unblock():
                statuses = _statuses(ids)
            if statuses.get("READY", 0) == 0 and (finished == JOBS or time.monotonic() - quiet_since > 3 * SECONDS + 3):
                break
            time.sleep(0.2)
        time.sleep(2 * SECONDS)  # room for a job that would finish twice
        with django_db_blocker.unblock():
            return _statuses(ids)
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in (first, second):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _done(folder: Path) -> list[int]:
    return sorted(int(p.stem) for p in folder.glob("*.done"))


@pytest.mark.slow
def test_two_workers_run_every_job_once_and_lose_none_when_one_is_killed(
        django_db_setup: Any, django_db_blocker: Any, tmp_path: Path) -> None:
    folder = tmp_path / "leased"
    statuses = _run(folder, django_db_blocker, leased=True)
    assert _done(folder) == list(range(JOBS)), statuses
    assert list(folder.glob("*.twice")) == [], "a job finished twice"
    assert statuses == {"SUCCESSFUL": JOBS}, statuses
    restarted = [p.stem for p in folder.glob("*.started") if len(p.read_text().split()) > 1]
    assert len(restarted) == 1, f"only the killed worker's job starts twice: {restarted}"


@pytest.mark.slow
def test_forced_fail_without_the_lease_the_killed_job_is_lost(
        django_db_setup: Any, django_db_blocker: Any, tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    statuses = _run(folder, django_db_blocker, leased=False)
    assert len(_done(folder)) == JOBS - 1 and statuses == {"SUCCESSFUL": JOBS - 1, "RUNNING": 1}, statuses
