"""Locators → chunk ids, resolved at the start of every run (re-chunking never breaks a set).

A locator that matches no chunk is an error of the set or of the ingest, reported as such,
never counted as a miss.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql

from evaluation.golden import GoldenSet, Locator
from tenants.models import Audience, Tenant
from tenants.scope import ChunkQuery, TenantScope


@dataclass(frozen=True)
class ChunkInfo:
    chunk_id: int
    source_type: str
    slug: str
    heading_path: str
    page: int | None
    archived: bool


def tenant_chunks(tenant: Tenant) -> dict[int, ChunkInfo]:
    """Every chunk of the tenant, archived included: the evaluator's view, never an asker's."""
    scope = TenantScope(tenant_id=tenant.id, include_archived=True,
                        audience_ids=tuple(Audience.objects.filter(tenant=tenant).values_list("id", flat=True)))
    rows = scope.fetch(ChunkQuery(select=sql.SQL("c.id, d.source_type, d.slug, c.heading_path, c.page"),
                                  with_document=True))
    return {r["id"]: ChunkInfo(r["id"], r["source_type"], r["slug"], r["heading_path"], r["page"], r["archived"])
            for r in rows}


def matches(locator: Locator, chunk: ChunkInfo, *, page_level: bool = False) -> bool:
    if chunk.source_type != locator.source or chunk.slug != locator.document_slug:
        return False
    if page_level:
        return True
    if locator.heading and locator.heading.lower() not in chunk.heading_path.lower():
        return False
    if locator.page is not None and chunk.page != locator.page:
        return False
    return True


def resolve(golden: GoldenSet, chunks: dict[int, ChunkInfo]) -> tuple[dict[str, set[int]], list[str]]:
    """case id → chunk ids of any expected locator; plus the set's errors."""
    resolved: dict[str, set[int]] = {}
    errors: list[str] = []
    for case in golden.cases:
        ids: set[int] = set()
        for locator in case.expected:
            found = {cid for cid, info in chunks.items() if matches(locator, info)}
            if not found:
                errors.append(f"{case.id}: locator {locator.describe()} resolves to no chunk")
            ids |= found
        resolved[case.id] = ids
    return resolved, errors
