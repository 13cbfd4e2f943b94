"""Did two ingests of the same pages write the same rows? Compares two tenants chunk by chunk.

    .venv/bin/python bench/same_rows.py --a var/pgdata:pgdocs --b var/bench-pgdata:bench-peer-NNN

Each side is an embedded server's data folder and a tenant slug. Chunks are matched by their
document's (source type, slug) and ordinal; for each pair the content, heading path, token
count, vector and token states must be byte-identical (compared as md5 digests computed in the
servers, so no vector leaves them). Issue 51 asks that an ingest made faster writes the same
rows, so the developer sets' eval results cannot change case by case: this is the check.
Writes bench/results/same-rows.json; exits 1 when any pair differs or is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# One row per live chunk of the tenant; corpus_chunk_pkey (tenant_id, id) and the document's
# primary key serve the join. The digests are computed server-side.
QUERY = """
SELECT d.source_type, d.slug, c.ordinal,
       md5(c.content) AS content, md5(c.heading_path) AS heading, c.token_count,
       md5(c.embedding::text) AS vector, md5(c.token_states) AS states, c.encoder
FROM corpus_chunk c
JOIN corpus_document d ON d.tenant_id = c.tenant_id AND d.id = c.document_id
JOIN tenants_tenant t ON t.id = c.tenant_id
WHERE t.slug = %(slug)s AND c.tenant_id = t.id AND NOT c.archived
"""


def side(spec: str) -> dict[tuple[str, str, int], dict[str, Any]]:
    import psycopg
    from psycopg.rows import dict_row

    from config.embedded_db import EmbeddedDatabase, ensure_running

    folder, _, slug = spec.rpartition(":")
    database: EmbeddedDatabase = ensure_running((ROOT / folder).resolve())
    with psycopg.connect(database.uri("postgres"), row_factory=dict_row) as conn:
        rows = conn.execute(QUERY, {"slug": slug}).fetchall()
    if not rows:
        raise SystemExit(f"{spec}: no live chunks (is the tenant there?)")
    return {(r["source_type"], r["slug"], r["ordinal"]): r for r in rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, help="DATA_FOLDER:TENANT_SLUG")
    parser.add_argument("--b", required=True, help="DATA_FOLDER:TENANT_SLUG")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "same-rows.json")
    args = parser.parse_args()
    a, b = side(args.a), side(args.b)
    fields = ("content", "heading", "token_count", "vector", "states", "encoder")
    differing = {f: 0 for f in fields}
    for key in set(a) & set(b):
        for f in fields:
            differing[f] += a[key][f] != b[key][f]
    result = {"a": args.a, "b": args.b, "chunks_a": len(a), "chunks_b": len(b),
              "only_in_a": len(set(a) - set(b)), "only_in_b": len(set(b) - set(a)),
              "differing": differing}
    result["same_rows"] = result["only_in_a"] == result["only_in_b"] == 0 and not any(differing.values())
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if result["same_rows"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
