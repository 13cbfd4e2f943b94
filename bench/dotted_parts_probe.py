"""Known-item probes for 0075: names a tenant's pages hold only inside a dotted identifier.

For each tenant, the last parts (>= 6 characters, no underscore) of its dotted identifiers that
occur nowhere as a word of their own; for up to 60 of them (seed 7) the question "What is <Name>
used for?", with the name as the pages write it, searched with RETRIEVAL_DOTTED_PARTS off and on:
is a page holding the identifier in the top 5, and does 0051's rule call the name unknown.
Made from the vocabulary alone, no golden question read.

    .venv/bin/python bench/dotted_parts_probe.py   # writes bench/results/dotted-parts-probe-0075.json
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import override_settings  # noqa: E402
from psycopg import sql  # noqa: E402

from retrieval.search import search  # noqa: E402
from tenants.models import Audience, Tenant  # noqa: E402
from tenants.scope import ChunkQuery, TenantScope  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "dotted-parts-probe-0075.json"
_DOTTED = r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$"


def hidden_parts(scope: TenantScope) -> tuple[int, list[str]]:
    """The dotted identifiers' count, and their last parts no chunk holds as a word of its own."""
    dotted = scope.terms_matching(_DOTTED)
    lasts = sorted({term.rsplit(".", 1)[1] for term in dotted if len(term.rsplit(".", 1)[1]) >= 6})
    with connection.cursor() as cursor:  # no tenant data: the words' own lexemes
        cursor.execute("SELECT w, (SELECT string_agg(lexeme, ' ') FROM unnest(to_tsvector('english', w)))"
                       " FROM unnest(%s::text[]) AS w", [lasts])
        lexeme = {word: lex for word, lex in cursor.fetchall() if lex and " " not in lex and "_" not in word}
    held = scope.document_frequencies(sorted(set(lexeme.values())))
    return len(dotted), [w for w in lasts if w in lexeme and not held.get(lexeme[w])]


def probe(scope: TenantScope, name: str) -> dict[str, object] | None:
    # Where the name stands, as written: the chunks holding `.<name>` as a whole word.
    found = scope.fetch(ChunkQuery(
        select=sql.SQL("substring(c.content FROM %(grab)s) AS written, d.slug"),
        where=sql.SQL("c.content ~* %(find)s"), limit=200, with_document=True,
        params={"grab": "(?i)\\.(" + re.escape(name) + ")\\M", "find": "\\." + re.escape(name) + "\\M"}))
    if not found:
        return None
    written, pages = found[0]["written"], {row["slug"] for row in found}
    row: dict[str, object] = {"name": written}
    for label, flag in (("off", False), ("on", True)):
        with override_settings(RETRIEVAL_DOTTED_PARTS=flag):
            result = search(scope=scope, query=f"What is {written} used for?", ts_config="english", k=5)
        row[label] = {"page_at_5": any(c.slug in pages for c in result.candidates[:5]),
                      "unknown_name": bool(result.unknown_names)}
    return row


def main() -> None:
    out: dict[str, object] = {}
    for slug in ("djangodocs", "pgdocs", "pydocs"):
        tenant = Tenant.objects.filter(slug=slug).first()
        if tenant is None:
            print(f"{slug}: not ingested (make {slug}), skipped")
            continue
        audience = Audience.objects.get(tenant=tenant, slug="public").id
        scope = TenantScope(tenant_id=tenant.id, audience_ids=(audience,))
        dotted, hidden = hidden_parts(scope)
        random.seed(7)
        rows = [r for r in (probe(scope, n) for n in random.sample(hidden, min(60, len(hidden)))) if r]
        count = {f"{arm} {what}": sum(bool(r[arm][what]) for r in rows)  # type: ignore[index]
                 for arm in ("off", "on") for what in ("page_at_5", "unknown_name")}
        print(f"{slug}: {dotted} dotted identifiers, {len(hidden)} parts held only inside one; "
              f"{len(rows)} probes: {count}")
        out[slug] = {"dotted_terms": dotted, "hidden_parts": len(hidden), "counts": count, "probes": rows}
    OUT.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
