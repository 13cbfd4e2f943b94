"""Web sources on the task worker `make run` already starts: no scheduler service of its own.

A scheduled source is a chain: each scheduled run, when it ends (well or not), queues the next
with `run_after` (the database backend's worker runs a task only once its time has come) and
records that time in `next_run_at`. A queued run carries the time it was queued for; when the
source's `next_run_at` no longer says that time (the schedule was changed, the source deleted),
the run is stale and does nothing, so a schedule change never leaves two chains running.
"Sync now" queues a run outside the chain.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone
from django_tasks import default_task_backend, task

from corpus.models import WebSource
from corpus.sources.websync.sync import websync_run
from tenants.models import Tenant
from tenants.rls import tenant_context

INTERVALS: dict[str, dt.timedelta] = {WebSource.Schedule.DAILY: dt.timedelta(days=1), WebSource.Schedule.WEEKLY: dt.timedelta(days=7)}


@task()
def websync_task(tenant_id: int, source_id: int, due: str = "") -> dict[str, Any]:
    return websync_task_run(tenant_id=tenant_id, source_id=source_id, due=due)


def websync_task_run(*, tenant_id: int, source_id: int, due: str = "") -> dict[str, Any]:
    tenant = Tenant.objects.get(pk=tenant_id)
    with tenant_context(tenant_id):
        # Index: corpus_websource_pkey (tenant_id, id).
        source = WebSource.objects.filter(tenant_id=tenant_id, pk=source_id).first()
    if source is None:
        return {"skipped": "the web source no longer exists"}
    if due and source.next_run_at != dt.datetime.fromisoformat(due):
        return {"skipped": "a stale scheduled run: the schedule changed since it was queued"}
    try:
        return websync_run(tenant=tenant, source_id=source_id).as_dict()
    finally:
        if due:
            websync_schedule(tenant=tenant, source_id=source_id)


def websync_schedule(*, tenant: Tenant, source_id: int, start: dt.datetime | None = None) -> dt.datetime | None:
    """Queue the source's next scheduled run (at `start`, else one interval from now); None for
    a manual source or a backend that cannot run a task later."""
    with tenant_context(tenant.id):
        source = WebSource.objects.filter(tenant=tenant, pk=source_id).first()
        interval = INTERVALS.get(source.schedule) if source is not None else None
        when = None
        if interval is not None and default_task_backend.supports_defer:
            when = start or timezone.now() + interval
        WebSource.objects.filter(tenant=tenant, pk=source_id).update(next_run_at=when)
    if when is not None:
        transaction.on_commit(lambda: websync_task.using(run_after=when).enqueue(
            tenant_id=tenant.id, source_id=source_id, due=when.isoformat()))
    return when


def websync_now(*, tenant: Tenant, source_id: int) -> None:
    """Queue a run now, outside the schedule."""
    with tenant_context(tenant.id):
        WebSource.objects.filter(tenant=tenant, pk=source_id).update(last_status=WebSource.Status.QUEUED)
    transaction.on_commit(lambda: websync_task.enqueue(tenant_id=tenant.id, source_id=source_id))
