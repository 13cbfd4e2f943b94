"""System check: are the search operators LEAKPROOF, so indexes serve them under RLS?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.checks import CheckMessage, Tags, Warning, register
from django.db import connections

# (schema-qualified function, its arguments) as in config.embedded_db.LEAKPROOF_STATEMENTS.
_FUNCTIONS = (("ts_match_vq", "tsvector, tsquery"), ("similarity_op", "text, text"))


def not_leakproof(using: str = "default") -> list[str]:
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT proname FROM pg_proc WHERE proname = ANY(%s) AND proleakproof",
                       [[name for name, _ in _FUNCTIONS]])
        marked = {row[0] for row in cursor.fetchall()}
    return [f"{name}({args})" for name, args in _FUNCTIONS if name not in marked]


@register(Tags.database)
def check_search_operators_leakproof(app_configs: Sequence[Any] | None = None, databases: Sequence[str] | None = None,
                                     **kwargs: Any) -> list[CheckMessage]:
    if not databases or "default" not in databases:
        return []
    missing = not_leakproof("default")
    if not missing:
        return []
    from config.embedded_db import LEAKPROOF_STATEMENTS

    return [Warning(
        f"{', '.join(missing)} not LEAKPROOF: under row-level security the keyword leg and the typo "
        "lookup cannot use their indexes and scan every row of the tenant (correct, but 5-20x slower).",
        hint="As a superuser run: " + "; ".join(LEAKPROOF_STATEMENTS)
             + " (docs/decisions/0024-leakproof-search-operators.md).",
        id="retrieval.W001",
    )]
