"""Answerdesk's ingest, a bare encode of its texts and the LlamaIndex peer on the same manual, back to
back (issue 20 item 4, issue 51).

    .venv/bin/python bench/ingest_vs_peer.py [FOLDER] [--limit N] [--backend torch|onnx|onnx-int8] [--keep]

`make bench-peer` installs the peer's virtual environment (var/peer-venv) and runs this. Both
halves write into the bench database (var/bench-pgdata, or DATABASE_URL's server), use the
same model files (the product's bundled all-MiniLM-L6-v2) and read the same pages: the whole
folder, or with --limit the first N pages by name (copied to var/bench-peer-pages, which both
read; a fixed path, because LlamaIndex embeds each page's file path with its text and a random
scratch name changed the peer's chunk count from run to run).

1. Answerdesk: the encoder (EMBEDDING_BACKEND, --backend overrides it) is loaded and warmed,
   then `ingest_paths` into a fresh tenant is timed as bench/ingest.py times it, with the
   seconds of each stage (config.stageclock.INGEST_STAGES; the writer thread's stages overlap
   the encoder's).
2. Bare encode: the same process encodes the tenant's stored chunk texts with the encoder's
   backend alone (`embed`, the configured batch size, no database): the floor the ingest is
   read against (issue 51: at most 1.15 times it).
3. Right after, in a child process of var/peer-venv: bench/peer.py (read, split, embed, insert).

The issue compares time per manual, not chunks/s (the two chunkers cut different counts), so
the ratio is Answerdesk's seconds over the peer's; its goal is at most 0.4 (issue 51; 0.5
before). The load average is read before each half: a busy machine makes the ratio say little.
`bench/ingest_chart.py` draws the result as docs/img/ingest-stages.svg. The tenant and the
peer's schema are removed afterwards (--keep leaves them), so every run writes into a
database of the same size. Writes bench/results/ingest-vs-peer.json (with --limit,
ingest-vs-peer-limitN.json, so a quick check never replaces a whole-manual result).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import ROOT, start_django

MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")
PEER_PYTHON = ROOT / "var" / "peer-venv" / "bin" / "python"
PEER_SCHEMA = "llamaindex_peer"
PAGES_COPY = ROOT / "var" / "bench-peer-pages"
GOAL_RATIO = 0.4
GOAL_BARE = 1.15


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=MANUAL)
    parser.add_argument("--limit", type=int, default=None, help="only the first N pages by name (a quick check)")
    parser.add_argument("--backend", choices=("torch", "onnx", "onnx-int8"), default=None,
                        help="EMBEDDING_BACKEND for Answerdesk's half (default: the product's setting)")
    parser.add_argument("--keep", action="store_true", help="leave the tenant and the peer's schema in place")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit must be at least 1, got {args.limit}")
    if not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder (the manual comes with `make pgdocs-install`)")
    if not PEER_PYTHON.exists():
        parser.error(f"{PEER_PYTHON} is missing: `make bench-peer` creates the peer's virtual environment")
    return args


def pages_folder(*, folder: Path, limit: int | None) -> tuple[Path, int]:
    """The folder both halves read, and its page count: the first `limit` pages by name are
    copied aside, so Answerdesk's folder ingest and the peer see exactly the same files."""
    pages = sorted(folder.glob("*.html"))
    if not pages:
        raise SystemExit(f"{folder} holds no .html pages")
    if limit is None:
        return folder, len(pages)
    shutil.rmtree(PAGES_COPY, ignore_errors=True)
    PAGES_COPY.mkdir(parents=True)
    for page in pages[:limit]:
        shutil.copy2(page, PAGES_COPY / page.name)
    return PAGES_COPY, min(limit, len(pages))


def answerdesk_half(*, folder: Path) -> tuple[dict[str, Any], Any]:
    """Ingest `folder` into a fresh tenant with the model already warm; returns the
    measurements and the tenant (for removal)."""
    from corpus.encoders.embedding import get_encoder
    from corpus.ingest.flow import ingest_paths
    from tenants import actions

    encoder = get_encoder()
    encoder.encode(["warm up"])
    tenant, _ = actions.tenant_get_or_create(slug=f"bench-peer-{int(time.time())}")
    load = os.getloadavg()
    report = ingest_paths(tenant=tenant, paths=[folder], progress=True, encoder=encoder)
    print(report.summary(), flush=True)
    if report.failed:
        print(f"{len(report.failed)} files failed, first: {report.failed[0]}", file=sys.stderr)
    return {
        "tenant": tenant.slug,
        "encoder": encoder.identity,
        "documents": report.added + report.changed,
        "chunks": report.chunks,
        "seconds": round(report.seconds, 2),
        "chunks_per_s": round(report.chunks_per_second, 2),
        "encode_seconds": round(report.encode_seconds, 2),
        "stage_seconds": {name: round(seconds, 2) for name, seconds in report.stage_seconds.items()},
        "failed": len(report.failed),
        "load_average_before": [round(x, 2) for x in load],
    }, tenant


def bare_half(*, tenant: Any) -> dict[str, Any]:
    """The tenant's stored chunk texts encoded by the backend alone, as one `embed` call."""
    from django.conf import settings
    from psycopg import sql

    from corpus.encoders.embedding import get_encoder
    from tenants import actions
    from tenants.scope import ChunkQuery, TenantScope

    audiences = actions.audience_ids(tenant=tenant, slugs=["public", "customer", "internal"])
    scope = TenantScope(tenant_id=tenant.id, audience_ids=audiences)
    rows = scope.fetch(ChunkQuery(select=sql.SQL("c.content"), order_by=sql.SQL("c.id")))
    texts = [r["content"] for r in rows]
    encoder = get_encoder()
    load = os.getloadavg()
    started = time.perf_counter()
    encoder.backend.embed(texts, batch_size=settings.EMBEDDING_BATCH_SIZE, bulk=True)
    seconds = time.perf_counter() - started
    return {"texts": len(texts), "seconds": round(seconds, 2), "chunks_per_s": round(len(texts) / seconds, 2),
            "load_average_before": [round(x, 2) for x in load]}


def peer_half(*, folder: Path, database_url: str, model: Path) -> dict[str, Any]:
    """bench/peer.py in var/peer-venv; its JSON comes back through a scratch file."""
    with tempfile.TemporaryDirectory(prefix="bench-peer-") as scratch:
        out = Path(scratch) / "peer.json"
        command = [str(PEER_PYTHON), str(ROOT / "bench" / "peer.py"), str(folder), "--model", str(model),
                   "--database-url", database_url, "--schema", PEER_SCHEMA, "--json", str(out)]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        load = os.getloadavg()
        completed = subprocess.run(command, env=env, check=False)
        if completed.returncode != 0 or not out.exists():
            raise SystemExit(f"the peer failed (exit {completed.returncode}); its output is above")
        result = json.loads(out.read_text())
    result["load_average_before"] = [round(x, 2) for x in load]
    return result


def owner_url() -> str:
    """A URL the peer may create and drop its schema with: DATABASE_URL's server as given, or
    the embedded bench server's owner role over its unix socket."""
    from django.conf import settings

    from config.embedded_db import OWNER_ROLE, EmbeddedDatabase

    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    assert settings.EMBEDDED_PGDATA is not None
    return EmbeddedDatabase(settings.EMBEDDED_PGDATA).uri(OWNER_ROLE)


def remove_runs(*, tenant: Any, database_url: str) -> None:
    import psycopg
    from psycopg import sql

    from ingest_cpu import delete_tenant

    delete_tenant(tenant.id, tenant.slug)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(PEER_SCHEMA)))


def main() -> int:
    args = parse_args()
    if args.backend:
        os.environ["EMBEDDING_BACKEND"] = args.backend
    start_django(own_database=True, migrate=True)
    from django.conf import settings

    from corpus.encoders.embedding import model_path

    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    folder, pages = pages_folder(folder=args.folder, limit=args.limit)
    ours, tenant = answerdesk_half(folder=folder)
    bare = bare_half(tenant=tenant)
    database_url = owner_url()
    peer = peer_half(folder=folder, database_url=database_url, model=model_path())
    if not args.keep:
        remove_runs(tenant=tenant, database_url=database_url)
    ratio = round(ours["seconds"] / peer["seconds"], 3) if peer["seconds"] else None
    over_bare = round(ours["seconds"] / bare["seconds"], 3) if bare["seconds"] else None
    result = {
        "started_utc": started,
        "folder": str(args.folder),
        "pages": pages,
        "limit": args.limit,
        "backend": settings.EMBEDDING_BACKEND,
        "answerdesk_batch_size": settings.EMBEDDING_BATCH_SIZE,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "answerdesk": ours,
        "bare_encode": bare,
        "peer": peer,
        "ratio_seconds": ratio,
        "ratio_meaning": f"Answerdesk's seconds / the peer's seconds for the same pages (goal: <= {GOAL_RATIO})",
        "goal_met": ratio is not None and ratio <= GOAL_RATIO,
        "over_bare_encode": over_bare,
        "over_bare_meaning": f"Answerdesk's ingest seconds / the bare encode of its texts (goal: <= {GOAL_BARE})",
        "over_bare_goal_met": over_bare is not None and over_bare <= GOAL_BARE,
    }
    name = "ingest-vs-peer.json" if args.limit is None else f"ingest-vs-peer-limit{args.limit}.json"
    out = args.json or ROOT / "bench" / "results" / name
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(f"written to {out}")
    return 0 if ours["failed"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
