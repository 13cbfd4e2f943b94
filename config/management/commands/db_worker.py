"""`db_worker` with a lease: a job whose worker died mid-run goes back to the queue (docs/decisions/0123).

django-tasks' database worker claims a job by setting it RUNNING under `SELECT … FOR UPDATE SKIP
LOCKED`, so two workers never take the same job; but a worker killed mid-job (SIGKILL, the OOM
killer, a lost machine) leaves its job RUNNING for ever, and nothing runs it again. Here each
worker holds, for its whole life, a session advisory lock keyed by its worker id on a connection
of its own (a lease: PostgreSQL releases it when the process or its connection dies), taken
before it claims anything. Every worker, every `--interval`, puts back to READY the RUNNING jobs
whose last worker holds no lease. A job therefore runs to completion once, and is started again
only when the worker that started it is gone; a job must tolerate a restart (ingest does: a
killed ingest leaves the old versions and the rerun completes, docs/decisions/0030).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.db import DatabaseError, connections
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand
from django_tasks_db.management.commands.db_worker import Worker

log = logging.getLogger("django_tasks_db")

# The first key of every worker lease (pg_advisory_lock(int4, int4)); the second is hashtext(worker id).
LEASE_CLASS = 1_732_184
_TAKE = "SELECT pg_advisory_lock(%(class)s, hashtext(%(worker)s))"
# The jobs table is coordinator-local on Citus (tenants/distribution.py LOCAL), as is pg_locks.
REQUEUE = """
UPDATE django_tasks_database_dbtaskresult AS t SET status = 'READY', started_at = NULL
 WHERE t.status = 'RUNNING' AND t.backend_name = %(backend)s
   AND NOT EXISTS (
       SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = %(class)s::oid AND l.objid = hashtext(t.worker_ids ->> -1)::oid)
RETURNING t.id
"""


def requeue_orphans(*, cursor: Any, backend: str) -> list[str]:
    """Put back to READY the RUNNING jobs whose last worker holds no lease; returns their ids."""
    cursor.execute(REQUEUE, {"backend": backend, "class": LEASE_CLASS})
    return [str(row[0]) for row in cursor.fetchall()]


class LeasedWorker(Worker):
    """The library's worker, with a lease thread started (and its lock held) before the first claim."""

    def run(self) -> None:
        leased = threading.Event()
        stop = threading.Event()
        lease = threading.Thread(target=self._lease, args=(leased, stop), name="worker-lease", daemon=True)
        lease.start()
        leased.wait()
        if not self.running:
            return
        try:
            super().run()
        finally:
            stop.set()
            lease.join(timeout=self.interval + 5)

    def _lease(self, leased: threading.Event, stop: threading.Event) -> None:
        # This thread's connection is its own (Django's are per thread) and is never closed by
        # the worker loop's close_old_connections(): the lock lives exactly as long as it does.
        connection = connections["default"]
        try:
            with connection.cursor() as cursor:
                cursor.execute(_TAKE, {"class": LEASE_CLASS, "worker": self.worker_id})
                leased.set()
                while not stop.is_set():
                    for job in requeue_orphans(cursor=cursor, backend=self.backend_name):
                        log.warning("Job id=%s lost its worker; back to the queue", job)
                    stop.wait(max(self.interval, 0.2))
        except DatabaseError:
            # Without the lease another worker would requeue this worker's job while it runs:
            # stop claiming, finish the job at hand, exit (the supervisor starts a new worker).
            log.exception("worker_id=%s lost its lease connection; stopping", self.worker_id)
            self.running = False
        finally:
            leased.set()
            connection.close()


class Command(DatabaseWorkerCommand):
    help = DatabaseWorkerCommand.help + " Holds a lease, so a job whose worker died runs again."

    def handle(self, **options: Any) -> None:
        from django_tasks_db.management.commands import db_worker as library

        original = library.Worker
        library.Worker = LeasedWorker  # type: ignore[misc]  # the library's handle() builds its worker by this name
        try:
            super().handle(**options)
        finally:
            library.Worker = original  # type: ignore[misc]  # put back what the line above replaced
