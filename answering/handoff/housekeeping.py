"""The scheduled side of the handoff: retention, the agents' digest, webhook and email retries that are due.

`handoff_housekeeping_task` runs every tenant's housekeeping and queues itself again an hour
later (backends with run_after, such as the database backend `make run` uses); `manage.py
handoff_housekeeping --schedule` starts that chain once, and without --schedule runs one round now.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import asdict
from typing import Any

from django.utils import timezone
from django_tasks import default_task_backend, task

from answering.handoff import notify, retention, webhooks
from answering.handoff.config import handoff_config
from answering.models import HandoffSettings
from tenants.models import Tenant

log = logging.getLogger(__name__)
INTERVAL = dt.timedelta(hours=1)


def housekeeping_run(*, now: dt.datetime | None = None) -> list[dict[str, Any]]:
    now = now or timezone.now()
    reports = []
    for tenant in Tenant.objects.order_by("slug"):
        report: dict[str, Any] = {"retention": asdict(retention.retention_apply(tenant=tenant, now=now))}
        if handoff_config(tenant_id=tenant.id).notify_mode == HandoffSettings.NotifyMode.DIGEST:
            report["digest"] = notify.agents_digest_send(tenant_id=tenant.id, tenant_name=tenant.name)
        report["webhook_retries"] = webhooks.webhook_due_deliveries(tenant_id=tenant.id, now=now)
        report["notification_retries"] = notify.notifications_due(tenant_id=tenant.id, now=now)
        reports.append(report)
    return reports


def _already_queued() -> bool:
    """With the database backend: is a round already waiting? (`make run` schedules at each start.)"""
    try:
        from django_tasks_db.models import DBTaskResult
    except ImportError:
        return False
    return DBTaskResult.objects.filter(task_path=handoff_housekeeping_task.module_path, status="READY").exists()


def housekeeping_schedule(*, when: dt.datetime | None = None, chained: bool = False) -> bool:
    """Queue the next round; False where the backend cannot run a task later."""
    if not default_task_backend.supports_defer:
        return False
    if not chained and _already_queued():
        return True
    handoff_housekeeping_task.using(run_after=when or timezone.now()).enqueue()
    return True


@task()
def handoff_housekeeping_task() -> int:
    try:
        reports = housekeeping_run()
    finally:
        housekeeping_schedule(when=timezone.now() + INTERVAL, chained=True)
    log.info("handoff housekeeping: %s", reports)
    return len(reports)
