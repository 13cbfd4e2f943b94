"""Reading back what ingest stored, through the same scope the product uses."""

from __future__ import annotations

from collections import Counter
from typing import Any

from psycopg import sql

from corpus.models import Document
from tenants.models import Audience, Tenant
from tenants.scope import ChunkQuery, TenantScope
from tenants.writer import ChunkWriter


def all_audiences(tenant: Tenant) -> tuple[int, ...]:
    return tuple(Audience.objects.filter(tenant=tenant).values_list("id", flat=True))


def stored_chunks(tenant: Tenant, *, include_archived: bool = True) -> list[dict[str, Any]]:
    scope = TenantScope(tenant_id=tenant.id, audience_ids=all_audiences(tenant), include_archived=include_archived)
    return scope.fetch(ChunkQuery(
        select=sql.SQL("c.id, c.document_id, c.ordinal, c.heading_path, c.content, c.page, c.token_count,"
                       " c.contested, c.context_blurb"),
        order_by=sql.SQL("c.document_id, c.ordinal"),
    ))


def documents(tenant: Tenant) -> dict[tuple[str, str], Document]:
    with ChunkWriter(tenant_id=tenant.id).rls_context():
        return {(d.source_type, d.slug): d for d in Document.objects.filter(tenant=tenant)}


def chunk_counts(tenant: Tenant) -> Counter[int]:
    return Counter(row["document_id"] for row in stored_chunks(tenant))


def assert_statistics_match_chunks(tenant: Tenant) -> None:
    """The BM25 statistics kept at ingest equal a recount over the live chunks."""
    scope = TenantScope(tenant_id=tenant.id, audience_ids=all_audiences(tenant))
    rows = scope.fetch(ChunkQuery(select=sql.SQL("c.id AS chunk, u.lexeme AS lexeme, c.term_count AS length"),
                                  lateral=sql.SQL("unnest(c.tsv) AS u")))
    expected: Counter[str] = Counter(row["lexeme"] for row in rows)
    lengths = {row["chunk"]: row["length"] for row in rows}
    assert scope.document_frequencies(list(expected)) == dict(expected)
    assert scope.corpus_totals() == (len(lengths), sum(lengths.values()))


def snapshot(tenant: Tenant) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Everything an ingest can change about a document: audience, bytes, status, chunks, tags."""
    chunks: dict[int, list[tuple[int, bool]]] = {}
    for row in stored_chunks(tenant):
        chunks.setdefault(row["document_id"], []).append((row["id"], row["contested"]))
    return {key: (doc.audience.slug, doc.content_hash, doc.status, doc.superseded_by_id, tuple(chunks.get(doc.pk, ())))
            for key, doc in documents(tenant).items()}


def assert_stayed_inside(tenant: Tenant, before: dict[tuple[str, str], tuple[Any, ...]], held: set[str]) -> None:
    """The writer's invariant: nothing new or changed lies outside `held`, and every document
    outside `held` is exactly what it was."""
    after = snapshot(tenant)
    for key, state in after.items():
        if state != before.get(key) and state[0] not in held:
            raise AssertionError(f"{key} was written into audience {state[0]!r}, outside {sorted(held)}")
    for key, state in before.items():
        if state[0] not in held and after.get(key) != state:
            raise AssertionError(f"{key} ({state[0]}) changed: {state} -> {after.get(key)}")


def texts_encoded(monkeypatch: Any, target: Any, methods: tuple[str, ...]) -> list[str]:
    """Every text handed to `methods` of `target` (an encoder, or its backend for what reaches
    the model), in order; each call still runs for real."""
    seen: list[str] = []
    for method in methods:
        real = getattr(target, method)

        def counted(texts: list[str], *a: Any, real: Any = real, **k: Any) -> Any:
            seen.extend(texts)
            return real(texts, *a, **k)

        monkeypatch.setattr(target, method, counted)
    return seen
