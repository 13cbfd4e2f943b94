"""Who starts an ingest, and so which audiences it may write into.

The operator on the machine (`manage.py ingest`, the demo loader, benchmarks) holds every
audience of the tenant. A key or a staff member holds theirs, and an ingest they start writes
only there: a file's own audience (front matter, a ticket's field), a document it would
replace, a supersession and a manifest's conflict are all held to the same set
(docs/decisions/0031-writers-hold-their-audiences.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Writer:
    # None: every audience of the tenant (the operator); otherwise audience slugs.
    audiences: frozenset[str] | None

    @classmethod
    def holding(cls, audiences: Iterable[str]) -> Writer:
        return cls(frozenset(str(a) for a in audiences))

    @property
    def is_operator(self) -> bool:
        return self.audiences is None

    def may_write(self, audience_slug: str) -> bool:
        return self.audiences is None or audience_slug in self.audiences

    def audience_ids(self, tenant_audiences: Mapping[str, int]) -> frozenset[int] | None:
        """The ids of the tenant's audiences this writer holds; None for the operator (all)."""
        if self.audiences is None:
            return None
        return frozenset(pk for slug, pk in tenant_audiences.items() if slug in self.audiences)

    def describe(self) -> str:
        return "every audience" if self.audiences is None else ", ".join(sorted(self.audiences)) or "no audience"


OPERATOR = Writer(None)
