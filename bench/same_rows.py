"""Did two ingests of the same pages write the same rows? Compares two tenants chunk by chunk.

    .venv/bin/python bench/same_rows.py --a var/pgdata:pgdocs --b var/bench-pgdata:bench-peer-NNN

Each side is an embedded server's data folder and a tenant slug, read in a child process of its
own (Django talks to one embedded server per process) through the tenant scope like any chunk
read. Chunks are matched by their document's (source type, slug) and ordinal; for each pair the
content, heading path, token count, vector and token states must be byte-identical (compared as
md5 digests computed in the server, so no vector leaves it). Issue 51 asks that an ingest made
faster writes the same rows, so the developer sets' eval results cannot change case by case:
this is the check. Writes bench/results/same-rows.json; exits 1 when any pair differs or is
missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness import ROOT, start_django

FIELDS = ("content", "heading", "token_count", "vector", "states", "encoder")


def digests(slug: str) -> list[dict[str, Any]]:
    """This process's database: one row of digests per live chunk of tenant `slug`."""
    start_django(own_database=False, migrate=False)
    from psycopg import sql

    from tenants import actions
    from tenants.models import Tenant
    from tenants.scope import ChunkQuery, TenantScope

    tenant = Tenant.objects.get(slug=slug)
    audiences = actions.audience_ids(tenant=tenant, slugs=["public", "customer", "internal"])
    rows = TenantScope(tenant_id=tenant.id, audience_ids=audiences).fetch(ChunkQuery(
        select=sql.SQL("d.source_type, d.slug, c.ordinal, md5(c.content) AS content, md5(c.heading_path) AS heading,"
                       " c.token_count, md5(c.embedding::text) AS vector, md5(c.token_states) AS states, c.encoder"),
        with_document=True))
    return [dict(r) for r in rows]


def side(spec: str) -> dict[tuple[str, str, int], dict[str, Any]]:
    folder, _, slug = spec.rpartition(":")
    env = {**os.environ, "ANSWERDESK_PGDATA": str((ROOT / folder).resolve())}
    env.pop("DATABASE_URL", None)
    out = subprocess.run([sys.executable, __file__, "--digests", slug], env=env, check=True,
                         capture_output=True, text=True).stdout
    rows = json.loads(out.strip().splitlines()[-1])
    if not rows:
        raise SystemExit(f"{spec}: no live chunks")
    return {(r["source_type"], r["slug"], r["ordinal"]): r for r in rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", help="DATA_FOLDER:TENANT_SLUG")
    parser.add_argument("--b", help="DATA_FOLDER:TENANT_SLUG")
    parser.add_argument("--digests", metavar="SLUG", help=argparse.SUPPRESS)  # the child's side
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "same-rows.json")
    args = parser.parse_args()
    if args.digests:
        print(json.dumps(digests(args.digests)))
        return 0
    if not (args.a and args.b):
        parser.error("--a and --b name the two tenants (DATA_FOLDER:TENANT_SLUG)")
    a, b = side(args.a), side(args.b)
    differing = {f: sum(a[key][f] != b[key][f] for key in set(a) & set(b)) for f in FIELDS}
    result: dict[str, Any] = {"a": args.a, "b": args.b, "chunks_a": len(a), "chunks_b": len(b),
                              "only_in_a": len(set(a) - set(b)), "only_in_b": len(set(b) - set(a)),
                              "differing": differing}
    result["same_rows"] = result["only_in_a"] == result["only_in_b"] == 0 and not any(differing.values())
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if result["same_rows"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
