"""Writes of documents and their chunks: one transaction per encode window, each document
in it all or nothing.

Every function runs inside the tenant's chunk writer context (tenants.writer.ChunkWriter),
which sets the row-level security settings for the transaction; retired chunk ids are handed
to corpus.ingest.hooks, which calls listeners only after the commit.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.db import connection
from django.utils import timezone

from config.stageclock import stage

from corpus.ingest.chunking import ChunkDraft
from corpus.language.keys import document_keys
from corpus.ingest.hooks import on_commit_chunks_retired
from corpus.models import Document
from corpus.ingest.origin import COMMAND, DocumentOrigin
from corpus.parsers import ParsedDocument
from corpus.language.terms import exact_terms
from tenants.models import Tenant
from tenants.writer import ChunkColumns, ChunkWriter

# Advisory-lock namespace for "one ingest per tenant at a time" (the second key is the tenant).
INGEST_LOCK_NAMESPACE = 0x1A6E57


def embedded_text(blurb: str, content: str) -> str:
    """The text a chunk's vector encodes: its context blurb, when it has one, before it."""
    return f"{blurb}\n\n{content}" if blurb else content


class EncoderMismatch(ValueError):
    """A tenant's vectors come from another encoder than the one this process writes with."""


def refuse_mixed_encoder(*, tenant: Tenant, encoder: str) -> None:
    """Refuse to add `encoder`'s vectors to a tenant that holds another encoder's: vectors of two
    runtimes of the same model agree to about 0.99, and a mixture ranks by neither."""
    writer = ChunkWriter(tenant_id=tenant.id)
    with writer.rls_context() as cursor:
        other = writer.other_encoder(cursor, encoder)
    if other is not None:
        raise EncoderMismatch(
            f"tenant {tenant.slug} holds vectors of encoder {other}; this process encodes with {encoder} "
            f"(EMBEDDING_BACKEND). Re-encode the tenant first: manage.py reembed --tenant {tenant.slug}"
        )


@dataclass(frozen=True)
class StoredState:
    document_id: int
    content_hash: str
    status: str
    superseded: bool
    audience_id: int


def stored_states(*, tenant: Tenant, source_type: str, slugs: Sequence[str]) -> dict[str, StoredState]:
    writer = ChunkWriter(tenant_id=tenant.id)
    with writer.rls_context():
        rows = Document.objects.filter(tenant=tenant, source_type=source_type, slug__in=list(slugs)).values_list(
            "slug", "id", "content_hash", "status", "superseded_by_id", "audience_id"
        )
        return {slug: StoredState(pk, digest, status, by is not None, audience)
                for slug, pk, digest, status, by, audience in rows}


@dataclass(frozen=True)
class DocumentWrite:
    """One parsed document and its chunks, ready to be stored: what the flow plans to write
    (flow._plan; its blurbs added by the contextualizer) is what write_documents takes."""

    parsed: ParsedDocument
    audience_id: int
    content_hash: str
    drafts: Sequence[ChunkDraft]
    blurbs: Sequence[str] | None = None
    origin: DocumentOrigin = COMMAND


def write_documents(*, tenant: Tenant, items: Sequence[DocumentWrite], vectors: np.ndarray, encoder: str,
                    token_states: Sequence[bytes | None] = ()) -> list[tuple[str, int]]:
    """Insert or replace these documents and all their chunks in one transaction.

    `vectors` holds every item's chunk vectors, in order, written by `encoder` (its identity, which
    every row records), and `token_states` (if given) their
    packed token states (corpus/encoders/token_states.py) in the same order. Returns (outcome, document id) per
    item. Each document stays all or nothing: its old chunks go and its new ones arrive in
    the same transaction, so no reader and no SIGKILL ever sees half of one. One transaction
    per encode window, not per document, lets one statement insert the window's chunks and
    count their BM25 statistics once (docs/decisions/0030-one-transaction-per-encode-window.md).
    """
    keys = [(item.parsed.source_type, item.parsed.slug) for item in items]
    if len(set(keys)) < len(keys):
        return _write_around_repeat(tenant=tenant, items=items, keys=keys, vectors=vectors, encoder=encoder,
                                    token_states=token_states)
    writer = ChunkWriter(tenant_id=tenant.id)
    now = timezone.now()
    with stage("write rows"), writer.rls_context() as cursor:
        stored = {
            (d.source_type, d.slug): d
            for d in Document.objects.select_for_update()
            .filter(tenant=tenant, slug__in=sorted({item.parsed.slug for item in items}))
            .order_by("pk")
        }
        outcomes: list[str] = []
        documents: list[Document] = []
        created: list[Document] = []
        replaced: list[Document] = []
        for item in items:
            fields = _document_fields(tenant=tenant, item=item, now=now)
            document = stored.get((item.parsed.source_type, item.parsed.slug))
            if document is None:
                document = Document(tenant=tenant, source_type=item.parsed.source_type, slug=item.parsed.slug,
                                    created_at=now, **fields)
                created.append(document)
                outcomes.append("added")
            elif document.content_hash == item.content_hash and (
                document.status == Document.Status.ACTIVE or document.superseded_by_id is not None
            ):
                outcomes.append("unchanged")  # another run got here first
            else:
                Document.objects.filter(tenant=tenant, pk=document.pk).update(**fields)
                replaced.append(document)
                outcomes.append("changed")
            documents.append(document)
        retired = writer.delete_for_documents(cursor, [d.pk for d in replaced]) if replaced else []
        Document.objects.bulk_create(created)
        with stage("keys"):
            columns = _chunk_columns(tenant=tenant, items=items, documents=documents, outcomes=outcomes,
                                     vectors=vectors, encoder=encoder, token_states=token_states)
        writer.insert_columns(cursor, columns)
        on_commit_chunks_retired(tenant_id=tenant.id, chunk_ids=retired,
                                 document_ids=[d.pk for d in created + replaced])
    return [(outcome, document.pk) for outcome, document in zip(outcomes, documents)]


def _document_fields(*, tenant: Tenant, item: DocumentWrite, now: datetime) -> dict[str, Any]:
    parsed = item.parsed
    return {
        "audience_id": item.audience_id,
        "title": parsed.title[:500],
        "version": parsed.version[:100],
        "effective_date": parsed.effective_date,
        "status": Document.Status.ACTIVE,
        "superseded_by": None,
        "content_hash": item.content_hash,
        "language": tenant.text_search_config,
        "source_path": parsed.source_path[:1000],
        "origin": item.origin.kind,
        "origin_ref": item.origin.ref_for(parsed.source_path),
        "fetched_at": item.origin.fetched_at,
        "chunk_count": len(item.drafts),
        "token_count": sum(d.token_count for d in item.drafts),
        "updated_at": now,
    }


def _write_around_repeat(*, tenant: Tenant, items: Sequence[DocumentWrite], keys: list[tuple[str, str]],
                         vectors: np.ndarray, encoder: str,
                         token_states: Sequence[bytes | None]) -> list[tuple[str, int]]:
    """The same document twice in one window (two folders holding the same file name): the later
    replaces the earlier, exactly as if each had been written on its own."""
    cut = next(i for i, key in enumerate(keys) if key in keys[:i])
    split = sum(len(item.drafts) for item in items[:cut])
    states = list(token_states) or [None] * len(vectors)
    return (write_documents(tenant=tenant, items=items[:cut], vectors=vectors[:split], encoder=encoder,
                            token_states=states[:split])
            + write_documents(tenant=tenant, items=items[cut:], vectors=vectors[split:], encoder=encoder,
                              token_states=states[split:]))


def _chunk_columns(*, tenant: Tenant, items: Sequence[DocumentWrite], documents: Sequence[Document],
                   outcomes: Sequence[str], vectors: np.ndarray, encoder: str,
                   token_states: Sequence[bytes | None] = ()) -> ChunkColumns:
    """The chunks of every added or changed document, as columns (no object per chunk)."""
    keep: list[np.ndarray] = []
    document_ids: list[int] = []
    audience_ids: list[int] = []
    ordinals: list[int] = []
    drafts: list[ChunkDraft] = []
    blurbs: list[str] = []
    offset = 0
    for item, document, outcome in zip(items, documents, outcomes):
        count = len(item.drafts)
        if outcome != "unchanged":
            keep.append(np.arange(offset, offset + count))
            document_ids.extend([document.pk] * count)
            audience_ids.extend([item.audience_id] * count)
            ordinals.extend(range(count))
            drafts.extend(item.drafts)
            blurbs.extend(item.blurbs if item.blurbs else [""] * count)
        offset += count
    contents = [d.content for d in drafts]
    rows = np.concatenate(keep) if keep else np.zeros(0, dtype=np.int64)
    return ChunkColumns(
        document_id=document_ids,
        audience_id=audience_ids,
        ordinal=ordinals,
        heading_path=[d.heading_path for d in drafts],
        content=contents,
        page=[d.page for d in drafts],
        token_count=[d.token_count for d in drafts],
        embedding=vectors[rows],
        ts_config=[tenant.text_search_config] * len(drafts),
        contested=[False] * len(drafts),
        context_blurb=blurbs,
        exact_terms=[exact_terms(text) for text in contents],
        language_keys=[document_keys(text, language=tenant.language) for text in contents],
        token_states=[token_states[i] for i in rows.tolist()] if token_states else (),
        encoder=encoder,
    )


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


def find_documents(*, tenant: Tenant, refs: Sequence[tuple[str, str]],
                   audience_ids: Collection[int] | None) -> dict[tuple[str, str], int]:
    """Document ids by (source type, slug). `audience_ids` limits the search to what a writer
    holds (None: every audience, the operator): a document outside it is not found, exactly
    like one that was never ingested."""
    writer = ChunkWriter(tenant_id=tenant.id)
    found: dict[tuple[str, str], int] = {}
    with writer.rls_context():
        documents = Document.objects.filter(tenant=tenant)
        if audience_ids is not None:
            documents = documents.filter(audience_id__in=list(audience_ids))
        for source_type, slug in refs:
            pk = documents.filter(source_type=source_type, slug=slug).values_list("pk", flat=True).first()
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
