"""CPU seconds per 1,000 chunks spent beside the encoder during an ingest.

    .venv/bin/python bench/ingest_cpu.py [FOLDER] [--files 150] [--runs 1] [--keep]

The ingest ratio (bench/ingest.py) is wall time on a 2-core machine, so it moves with
whatever else runs. What the encoder loses inside an ingest is the CPU that other work takes
from it, and CPU seconds depend far less on the machine being quiet. This script ingests a
subset of the PostgreSQL 15 manual (a stride sample of FILES pages copied to
/tmp/pgsubset-FILES unless FOLDER is given) into a fresh tenant of the developer database and
reports, per 1,000 chunks:

- writer backend: user+system CPU of the PostgreSQL backends serving the writer thread
  (/proc/<pg_backend_pid>/stat around each window's writes; `startup` is what a backend
  spent before its first write: fork, authentication, catalog caches);
- writer thread: `time.thread_time()` inside the thread that builds and sends the rows;
- main thread outside encode: the main thread's CPU minus its CPU inside `encode`
  (parsing, chunking, planning, the main connection's Python);
- server total: every process of the PostgreSQL server (writer and main backends, WAL
  writer, checkpointer, io workers, autovacuum), reaped children included. Other clients of
  the same server would show up here (the last line splits it by process), so read it next
  to the per-backend figure;
- process total: the whole Python process, encoder included (torch's threads burn CPU
  waiting for a straggler, so this falls when the writer takes less).

The tenant is deleted afterwards (its rows cascade) unless --keep, so repeated runs insert
into an index of the same size.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from harness import start_django

MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")
_TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int, *, children: bool = False) -> float:
    """utime+stime (and reaped children's, if asked) of a process in seconds."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()  # the command name may hold spaces
    # After the name: state is field 3, utime 14, stime 15, cutime 16, cstime 17 (1-based).
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / _TICK


def server_cpu(postmaster: int) -> dict[str, float]:
    """CPU of the server's processes by title ("walwriter", "io worker 0", "reaped", …).

    Reaped children (backends that have exited) are in the postmaster's cutime/cstime.
    """
    raw = Path(f"/proc/{postmaster}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()
    found = {"postmaster": (int(fields[11]) + int(fields[12])) / _TICK,
             "reaped": (int(fields[13]) + int(fields[14])) / _TICK}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
            title = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue  # exited between listing and reading: counted in "reaped" from now on
        fields = raw[raw.rindex(")") + 2 :].split()
        if int(fields[1]) == postmaster:
            name = title.removeprefix("postgres: ")
            if "[local]" in name or "@" in name:
                name = f"backend {entry.name}"
            found[name] = found.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / _TICK
    return found


@dataclass
class Meter:
    """CPU and wall seconds by where they went ("writer_thread", "backend_writes",
    "backend_startup", "encode_main_thread", "encode_wall"), and each writer backend's CPU."""

    seconds: Counter[str] = field(default_factory=Counter)
    backends: dict[int, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def subset(files: int) -> Path:
    target = Path(f"/tmp/pgsubset-{files}")
    if target.is_dir() and len(list(target.glob("*.html"))) == files:
        return target
    pages = sorted(MANUAL.glob("*.html"))
    if len(pages) < files:
        raise SystemExit(f"{MANUAL} has {len(pages)} pages, fewer than {files} (make pgdocs installs it)")
    stride = len(pages) / files  # a spread over the manual, not its first letters
    target.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        shutil.copy2(pages[int(i * stride)], target)
    return target


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--files", type=int, default=150)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the bench tenants")
    args = parser.parse_args()
    folder = args.folder or subset(args.files)
    start_django(own_database=False, migrate=False)
    from django.db import connection, connections

    import corpus.ingest.flow as ingest_module
    from corpus.encoders.embedding import Encoder, get_encoder
    from tenants import actions

    postmaster = int((Path(connections["default"].settings_dict["HOST"]) / "postmaster.pid").read_text().split()[0])
    meter = Meter()
    base = get_encoder()
    base.encode(["warm up"])

    class MeteredEncoder(Encoder):
        def _metered(self, call, texts, **kwargs):  # type: ignore[no-untyped-def]
            c0, w0 = time.thread_time(), time.perf_counter()
            try:
                return call(texts, **kwargs)
            finally:
                meter.seconds["encode_main_thread"] += time.thread_time() - c0
                meter.seconds["encode_wall"] += time.perf_counter() - w0

        # The ingest calls encode_with_states (token states kept, 0063) or encode (off).
        def encode(self, texts, **kwargs):  # type: ignore[no-untyped-def]
            return self._metered(super().encode, texts, **kwargs)

        def encode_with_states(self, texts, **kwargs):  # type: ignore[no-untyped-def]
            return self._metered(super().encode_with_states, texts, **kwargs)

    encoder = MeteredEncoder(backend=base.backend, name=base.name, dimension=base.dimension)
    original_write_group = ingest_module._write_group

    def metered_write_group(tenant, group, vectors, encoder, token_states):  # type: ignore[no-untyped-def]
        c0 = time.thread_time()
        connection.ensure_connection()
        pid = connection.connection.info.backend_pid
        before = proc_cpu(pid)
        try:
            return original_write_group(tenant, group, vectors, encoder, token_states)
        finally:
            after = proc_cpu(pid)
            with meter.lock:
                if pid not in meter.backends:
                    meter.seconds["backend_startup"] += before
                meter.backends[pid] = after
                meter.seconds["backend_writes"] += after - before
                meter.seconds["writer_thread"] += time.thread_time() - c0

    ingest_module._write_group = metered_write_group

    results: list[dict[str, float]] = []
    for run in range(args.runs):
        meter.seconds.clear()
        meter.backends.clear()
        slug = f"bench-cpu-{int(time.time())}-{run}"
        tenant, _ = actions.tenant_get_or_create(slug=slug)
        connection.ensure_connection()
        main_pid = connection.connection.info.backend_pid
        main_backend0, server0 = proc_cpu(main_pid), server_cpu(postmaster)
        usage0 = resource.getrusage(resource.RUSAGE_SELF)
        main0, wall0 = time.thread_time(), time.perf_counter()
        report = ingest_module.ingest_paths(tenant=tenant, paths=[folder], encoder=encoder)
        main_thread = time.thread_time() - main0
        wall = time.perf_counter() - wall0
        usage = resource.getrusage(resource.RUSAGE_SELF)
        process = (usage.ru_utime - usage0.ru_utime) + (usage.ru_stime - usage0.ru_stime)
        server1 = server_cpu(postmaster)
        server_by = {k: v - server0.get(k, 0.0) for k, v in server1.items()}
        server = sum(server_by.values())
        # Writer backends exit after each window: their CPU arrives under "reaped".
        others = {k or "postmaster": v for k, v in server_by.items()
                  if not k.startswith("backend ") and k not in ("reaped", "postmaster") and v > 0}
        main_backend = proc_cpu(main_pid) - main_backend0
        if not report.ok or not report.chunks:
            print(report.summary(), report.failed[:3])
            return 1
        per = 1000 / report.chunks
        row = {
            "chunks": report.chunks,
            "writer_backend_writes": meter.seconds["backend_writes"] * per,
            "writer_backend_startup": meter.seconds["backend_startup"] * per,
            "writer_thread": meter.seconds["writer_thread"] * per,
            "main_thread_outside_encode": (main_thread - meter.seconds["encode_main_thread"]) * per,
            "main_backend": main_backend * per,
            "server_total": server * per,
            "process_total": process * per,
            "encode_wall": meter.seconds["encode_wall"] * per,
            "ingest_wall": wall * per,
        }
        results.append(row)
        print(f"run {run + 1}: {report.summary()}; {len(meter.backends)} writer connections")
        for key, value in row.items():
            if key != "chunks":
                print(f"  {key:28s} {value:7.2f} s / 1,000 chunks")
        rest = (server - meter.seconds["backend_writes"] - meter.seconds["backend_startup"] - main_backend
                - sum(others.values()))
        print("  rest of server_total:", ", ".join(f"{k} {v * per:.2f}" for k, v in sorted(others.items())),
              f"other clients' backends and exited workers {rest * per:.2f}")
        if not args.keep:
            delete_tenant(tenant.id, tenant.slug)
    if len(results) > 1:
        print("median over runs:")
        for key in results[0]:
            if key != "chunks":
                print(f"  {key:28s} {statistics.median(r[key] for r in results):7.2f} s / 1,000 chunks")
    return 0


def delete_tenant(tenant_id: int, slug: str) -> None:
    """As the embedded server's superuser, which row-level security does not hold back:
    documents first (their chunks cascade), then the tenant (statistics and audiences).

    The server is the one Django's settings point at, and the row must carry both the id and
    the slug this script created: an id alone, sent to another database, can delete a tenant
    that is not ours.
    """
    import psycopg
    from django.conf import settings

    from config.embedded_db import EmbeddedDatabase

    if os.environ.get("DATABASE_URL") or settings.EMBEDDED_PGDATA is None:
        return  # someone else's server: leave the tenant for them to remove
    with psycopg.connect(EmbeddedDatabase(settings.EMBEDDED_PGDATA).uri("postgres")) as admin:
        params = {"t": tenant_id, "s": slug}
        mine = "(SELECT id FROM tenants_tenant WHERE id = %(t)s AND slug = %(s)s)"
        admin.execute("DELETE FROM corpus_document WHERE tenant_id = " + mine, params)
        admin.execute("DELETE FROM tenants_tenant WHERE id = %(t)s AND slug = %(s)s", params)


if __name__ == "__main__":
    raise SystemExit(main())
