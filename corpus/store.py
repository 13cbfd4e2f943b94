"""Writes of documents and their chunks: one document per transaction.

Every function runs inside the tenant's chunk writer context (tenants.scope.ChunkWriter),
which sets the row-level security settings for the transaction; retired chunk ids are handed
to corpus.hooks, which calls listeners only after the commit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection
from django.utils import timezone

from corpus.chunking import ChunkDraft
from corpus.hooks import on_commit_chunks_retired
from corpus.models import Document
from corpus.parsers import ParsedDocument
from corpus.terms import exact_terms
from tenants.models import Tenant
from tenants.scope import ChunkRow, ChunkWriter

# Advisory-lock namespace for "one ingest per tenant at a time" (the second key is the tenant).
INGEST_LOCK_NAMESPACE = 0x1A6E57


@dataclass(frozen=True)
class StoredState:
    document_id: int
    content_hash: str
    status: str
    superseded: bool


def stored_states(*, tenant: Tenant, source_type: str, slugs: Sequence[str]) -> dict[str, StoredState]:
    writer = ChunkWriter(tenant_id=tenant.id)
    with writer.rls_context():
        rows = Document.objects.filter(tenant=tenant, source_type=source_type, slug__in=list(slugs)).values_list(
            "slug", "id", "content_hash", "status", "superseded_by_id"
        )
        return {slug: StoredState(pk, digest, status, by is not None) for slug, pk, digest, status, by in rows}


def write_document(
    *,
    tenant: Tenant,
    parsed: ParsedDocument,
    audience_id: int,
    content_hash: str,
    drafts: Sequence[ChunkDraft],
    vectors: np.ndarray,
    blurbs: Sequence[str] | None = None,
) -> tuple[str, int]:
    """Insert or replace one document and all its chunks atomically. Returns (outcome, id)."""
    writer = ChunkWriter(tenant_id=tenant.id)
    fields = {
        "audience_id": audience_id,
        "title": parsed.title[:500],
        "version": parsed.version[:100],
        "effective_date": parsed.effective_date,
        "status": Document.Status.ACTIVE,
        "superseded_by": None,
        "content_hash": content_hash,
        "language": tenant.text_search_config,
        "source_path": parsed.source_path[:1000],
        "chunk_count": len(drafts),
        "token_count": sum(d.token_count for d in drafts),
        "updated_at": timezone.now(),
    }
    with writer.rls_context() as cursor:
        existing = (
            Document.objects.select_for_update()
            .filter(tenant=tenant, source_type=parsed.source_type, slug=parsed.slug)
            .first()
        )
        retired: list[int] = []
        if existing is None:
            document = Document.objects.create(tenant=tenant, source_type=parsed.source_type, slug=parsed.slug,
                                               **fields)
            outcome = "added"
        else:
            if existing.content_hash == content_hash and (
                existing.status == Document.Status.ACTIVE or existing.superseded_by_id is not None
            ):
                return "unchanged", existing.pk  # another run got here first
            retired = writer.delete_for_documents(cursor, [existing.pk])
            Document.objects.filter(pk=existing.pk).update(**fields)
            document = existing
            outcome = "changed"
        writer.insert(
            cursor,
            [
                ChunkRow(
                    document_id=document.pk,
                    audience_id=audience_id,
                    ordinal=ordinal,
                    heading_path=draft.heading_path,
                    content=draft.content,
                    page=draft.page,
                    token_count=draft.token_count,
                    embedding=vector,
                    ts_config=tenant.text_search_config,
                    context_blurb=blurbs[ordinal] if blurbs else "",
                    exact_terms=exact_terms(draft.content),
                )
                for ordinal, (draft, vector) in enumerate(zip(drafts, vectors))
            ],
        )
        on_commit_chunks_retired(tenant_id=tenant.id, chunk_ids=retired, document_ids=[document.pk])
    return outcome, document.pk


def archive_documents(*, tenant: Tenant, document_ids: Sequence[int], superseded_by: int | None = None) -> int:
    """Archive documents and their chunks; archived chunks never reach the live path."""
    if not document_ids:
        return 0
    writer = ChunkWriter(tenant_id=tenant.id)
    with writer.rls_context() as cursor:
        changed = Document.objects.filter(tenant=tenant, pk__in=list(document_ids)).exclude(
            status=Document.Status.ARCHIVED, superseded_by_id=superseded_by
        ).update(status=Document.Status.ARCHIVED, superseded_by_id=superseded_by, updated_at=timezone.now())
        retired = writer.set_archived(cursor, document_ids, True)
        on_commit_chunks_retired(tenant_id=tenant.id, chunk_ids=retired, document_ids=document_ids)
    return int(changed)


def find_documents(*, tenant: Tenant, refs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
    writer = ChunkWriter(tenant_id=tenant.id)
    found: dict[tuple[str, str], int] = {}
    with writer.rls_context():
        for source_type, slug in refs:
            pk = Document.objects.filter(tenant=tenant, source_type=source_type, slug=slug).values_list(
                "pk", flat=True
            ).first()
            if pk is not None:
                found[(source_type, slug)] = pk
    return found


def active_documents_under(*, tenant: Tenant, source_type: str, root: str) -> dict[str, int]:
    """Active documents whose source file lies under `root` (for --prune)."""
    writer = ChunkWriter(tenant_id=tenant.id)
    with writer.rls_context():
        rows = Document.objects.filter(
            tenant=tenant, source_type=source_type, status=Document.Status.ACTIVE, source_path__startswith=root
        ).values_list("slug", "pk")
        return dict(rows)


def tag_contested(*, tenant: Tenant, document_ids: Sequence[int], match: str) -> int:
    writer = ChunkWriter(tenant_id=tenant.id)
    with writer.rls_context() as cursor:
        tagged = writer.set_contested(cursor, document_ids, match)
        # A contested chunk changes how answers built on it must read: retire cached ones.
        on_commit_chunks_retired(tenant_id=tenant.id, chunk_ids=tagged, document_ids=[])
    return len(tagged)


class IngestBusy(RuntimeError):
    pass


@contextmanager
def tenant_ingest_lock(*, tenant: Tenant, wait: bool = True, on_wait: Any = None) -> Iterator[None]:
    """Serialise ingests of one tenant across processes with a session advisory lock."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [INGEST_LOCK_NAMESPACE, tenant.id])
        acquired = cursor.fetchone()[0]
        if not acquired:
            message = f"another ingest of tenant {tenant.slug} is running"
            if not wait:
                raise IngestBusy(message)
            if on_wait is not None:
                on_wait(f"{message}; waiting for it to finish…")
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [INGEST_LOCK_NAMESPACE, tenant.id])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [INGEST_LOCK_NAMESPACE, tenant.id])
