"""A document's life after ingest: archive it, restore it, delete it (issue 19 item 2), and the
reads the console and the API list documents with.

Each write is one transaction under the tenant's chunk writer (tenants.writer.ChunkWriter): the
document row, its chunks' visibility to search, the BM25 statistics, and with them the typo
vocabulary (retrieval.typos corrects only to terms of the term statistics, the table the
statistics keep: a term whose last live chunk goes leaves it in the same statement) change
together or not at all. Cached answers built on retired chunks go after the commit
(corpus.ingest.hooks). A writer names the audiences it holds; a document outside them is not found,
exactly like one that never existed (docs/decisions/0033). Supersession is kept explicit:
restoring a superseded document is refused, and deleting a successor leaves its predecessors
archived for someone to restore on purpose (docs/decisions/0056-document-lifecycle.md).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from django.db.models import QuerySet
from django.utils import timezone
from psycopg import sql

from corpus.ingest.hooks import on_commit_chunks_retired
from corpus.models import Document
from corpus.ingest.store import INGEST_LOCK_NAMESPACE
from tenants.models import Tenant
from tenants.scope import ChunkQuery, TenantScope
from tenants.writer import ChunkWriter

DocumentStatus = Literal["live", "archived", "superseded", "contested"]
STATUSES: tuple[DocumentStatus, ...] = get_args(DocumentStatus)
LIVE, ARCHIVED, SUPERSEDED, CONTESTED = STATUSES


class DocumentNotFound(LookupError):
    """Missing, another tenant's, or outside the writer's audiences: one answer for all three."""


class DocumentAmbiguous(LookupError):
    def __init__(self, slug: str, types: Sequence[str]) -> None:
        super().__init__(f"{slug!r} names documents of types {', '.join(types)}; choose one with type")
        self.types = list(types)


class LifecycleRefused(ValueError):
    """The change would break a rule; the message says which and what to do instead."""


@dataclass(frozen=True)
class LifecycleOutcome:
    action: str
    changed: list[int]  # documents whose state this call changed
    unchanged: list[int] = field(default_factory=list)  # already in the asked-for state
    chunk_ids: list[int] = field(default_factory=list)  # chunks that left or rejoined search
    released: list[int] = field(default_factory=list)  # predecessors a deleted successor no longer supersedes


def document_state(document: Document) -> str:
    """live, archived or superseded (contested is read from chunks: contested_document_ids)."""
    if document.superseded_by_id is not None:
        return SUPERSEDED
    return ARCHIVED if document.status == Document.Status.ARCHIVED else LIVE


def document_archive(*, tenant: Tenant, document_ids: Sequence[int],
                     audience_ids: Collection[int] | None) -> LifecycleOutcome:
    """Take live documents out of search. `audience_ids`: what the writer holds (None: the operator)."""
    writer = ChunkWriter(tenant_id=tenant.id)
    with writer.rls_context() as cursor:
        documents = _locked(cursor, tenant=tenant, document_ids=document_ids, audience_ids=audience_ids)
        live = [d.pk for d in documents if d.status == Document.Status.ACTIVE]
        retired = writer.set_archived(cursor, live, True) if live else []
        Document.objects.filter(tenant=tenant, pk__in=live).update(status=Document.Status.ARCHIVED,
                                                                   updated_at=timezone.now())
        on_commit_chunks_retired(tenant_id=tenant.id, chunk_ids=retired, document_ids=live)
    return LifecycleOutcome("archive", changed=live, unchanged=_others(documents, live), chunk_ids=retired)


def document_restore(*, tenant: Tenant, document_ids: Sequence[int],
                     audience_ids: Collection[int] | None) -> LifecycleOutcome:
    """Put archived documents back into search; a superseded one is refused (its successor is live)."""
    writer = ChunkWriter(tenant_id=tenant.id)
    with writer.rls_context() as cursor:
        documents = _locked(cursor, tenant=tenant, document_ids=document_ids, audience_ids=audience_ids)
        superseded = [d for d in documents if d.superseded_by_id is not None]
        if superseded:
            raise LifecycleRefused(
                f"{_names(superseded)} superseded by a newer version: restoring would put both versions in "
                "answers. Delete the newer version first (its predecessors then stay archived and can be "
                "restored), or re-ingest the file.")
        # Only archived ones: set_archived(False) counts every live chunk of a document into the
        # statistics, so a live document passed again would be counted twice.
        archived = [d.pk for d in documents if d.status == Document.Status.ARCHIVED]
        returned = writer.set_archived(cursor, archived, False) if archived else []
        Document.objects.filter(tenant=tenant, pk__in=archived).update(status=Document.Status.ACTIVE,
                                                                       updated_at=timezone.now())
    return LifecycleOutcome("restore", changed=archived, unchanged=_others(documents, archived), chunk_ids=returned)


def document_delete(*, tenant: Tenant, document_ids: Sequence[int],
                    audience_ids: Collection[int] | None) -> LifecycleOutcome:
    """Delete documents and their chunks. Predecessors they superseded stay archived, no longer
    superseded (the row that superseded them is gone); one outside the writer's audiences
    refuses the whole delete, since releasing it would change a document the writer cannot see."""
    writer = ChunkWriter(tenant_id=tenant.id)
    with writer.rls_context() as cursor:
        documents = _locked(cursor, tenant=tenant, document_ids=document_ids, audience_ids=audience_ids)
        ids = [d.pk for d in documents]
        predecessors = _predecessors(tenant=tenant, successor_ids=ids)
        if audience_ids is not None and any(p.audience_id not in audience_ids for p in predecessors):
            raise LifecycleRefused(f"{_names(documents)}: supersedes a document outside your audiences; "
                                   "ask someone who holds its audience to delete it")
        released = [p.pk for p in predecessors if p.pk not in ids]
        # Released first: the foreign key (tenant_id, superseded_by_id) restricts the delete.
        Document.objects.filter(tenant=tenant, pk__in=[p.pk for p in predecessors]).update(
            superseded_by=None, updated_at=timezone.now())
        retired = writer.delete_for_documents(cursor, ids)
        # Not QuerySet.delete(): Django's collector deletes the web pages and the documents by
        # primary key alone, which on Citus visits every shard (docs/decisions/0121).
        params = {"t": tenant.id, "d": ids}
        cursor.execute("DELETE FROM corpus_webpage WHERE tenant_id = %(t)s AND document_id = ANY(%(d)s)", params)
        cursor.execute("DELETE FROM corpus_document WHERE tenant_id = %(t)s AND id = ANY(%(d)s)", params)
        on_commit_chunks_retired(tenant_id=tenant.id, chunk_ids=retired, document_ids=ids)
    return LifecycleOutcome("delete", changed=ids, chunk_ids=retired, released=released)


def _locked(cursor: Any, *, tenant: Tenant, document_ids: Sequence[int],
            audience_ids: Collection[int] | None) -> list[Document]:
    """The documents, locked for this transaction, all or none: an id the writer may not touch
    fails the whole call. The tenant's ingest must not be running (its statistics increments
    assume ingests of a tenant are serialised, corpus.ingest.store.tenant_ingest_lock)."""
    # Transaction-scoped: released at commit or rollback, never held by a failed request.
    cursor.execute("SELECT pg_try_advisory_xact_lock(%(ns)s, %(t)s)", {"ns": INGEST_LOCK_NAMESPACE, "t": tenant.id})
    if not cursor.fetchone()[0]:
        raise LifecycleRefused(f"an ingest of tenant {tenant.slug} is running; try again when it has finished")
    wanted = sorted(set(document_ids))
    documents = list(_visible(tenant=tenant, audience_ids=audience_ids).filter(pk__in=wanted)
                     .select_for_update(of=("self",)).order_by("pk"))
    if [d.pk for d in documents] != wanted or not wanted:
        raise DocumentNotFound("no such document")
    return documents


def _visible(*, tenant: Tenant, audience_ids: Collection[int] | None) -> QuerySet[Document]:
    documents = Document.objects.filter(tenant=tenant)
    return documents if audience_ids is None else documents.filter(audience_id__in=sorted(audience_ids))


def _predecessors(*, tenant: Tenant, successor_ids: Sequence[int]) -> list[Document]:
    # Index: none on superseded_by_id; a tenant's documents are few thousand, and deletes rare.
    return list(Document.objects.filter(tenant=tenant, superseded_by_id__in=list(successor_ids))
                .select_for_update(of=("self",)).order_by("pk"))


def _others(documents: Sequence[Document], changed: Sequence[int]) -> list[int]:
    return [d.pk for d in documents if d.pk not in set(changed)]


def _names(documents: Sequence[Document]) -> str:
    return ", ".join(f"{d.source_type}/{d.slug}" for d in documents)


# -- reads ---------------------------------------------------------------------------------

def document_find(*, tenant: Tenant, slug: str, source_type: str | None,
                  audience_ids: Collection[int] | None) -> Document:
    """The visible document of this slug. Without a type, the only visible one of that slug;
    several are ambiguous (naming only visible types, so the answer reveals nothing hidden)."""
    with ChunkWriter(tenant_id=tenant.id).rls_context():
        found = _visible(tenant=tenant, audience_ids=audience_ids).filter(slug=slug)
        if source_type is not None:
            found = found.filter(source_type=source_type)
        documents = list(found.select_related("audience").order_by("source_type")[:5])
    if not documents:
        raise DocumentNotFound(f"no document {slug!r}")
    if len(documents) > 1:
        raise DocumentAmbiguous(slug, [d.source_type for d in documents])
    return documents[0]


def contested_document_ids(*, tenant_id: int, audience_ids: Collection[int],
                           document_ids: Sequence[int] | None = None) -> set[int]:
    """Documents with a contested chunk, in one scoped read (archived chunks included: a
    document's state is its own, whether or not search sees it now)."""
    scope = TenantScope(tenant_id=tenant_id, audience_ids=tuple(sorted(audience_ids)), include_archived=True)
    where = sql.SQL("c.contested")
    params: dict[str, Any] = {}
    if document_ids is not None:
        if not document_ids:
            return set()
        where = sql.SQL("c.contested AND c.document_id = ANY(%(documents)s)")
        params["documents"] = list(document_ids)
    # Index: corpus_chunk_tenant_doc_idx (tenant_id, document_id); contested chunks are rare.
    rows = scope.fetch(ChunkQuery(select=sql.SQL("c.document_id"), where=where, params=params))
    return {int(row["document_id"]) for row in rows}


@dataclass(frozen=True)
class DocumentPage:
    total: int
    documents: list[Document]
    contested: set[int]


def document_page(*, tenant: Tenant, audience_ids: Collection[int], state: str | None, source_type: str | None,
                  audience_id: int | None, limit: int, offset: int) -> DocumentPage:
    """One page of the visible documents, newest change first, with their contested flags
    (two queries and the count, whatever the page size)."""
    # Read before the writer's context: a scoped read nested in it would clear its settings on the way out.
    contested_ids = (contested_document_ids(tenant_id=tenant.id, audience_ids=audience_ids)
                     if state == CONTESTED else set())
    with ChunkWriter(tenant_id=tenant.id).rls_context():
        documents = _visible(tenant=tenant, audience_ids=audience_ids)
        if source_type is not None:
            documents = documents.filter(source_type=source_type)
        if audience_id is not None:
            documents = documents.filter(audience_id=audience_id)
        if state == LIVE:
            documents = documents.filter(status=Document.Status.ACTIVE)
        elif state == ARCHIVED:
            documents = documents.filter(status=Document.Status.ARCHIVED, superseded_by__isnull=True)
        elif state == SUPERSEDED:
            documents = documents.filter(superseded_by__isnull=False)
        elif state == CONTESTED:
            documents = documents.filter(pk__in=sorted(contested_ids))
        total = documents.count()
        page = list(documents.select_related("audience").order_by("-updated_at", "pk")[offset:offset + limit])
    contested = contested_document_ids(tenant_id=tenant.id, audience_ids=audience_ids,
                                       document_ids=[d.pk for d in page])
    return DocumentPage(total=total, documents=page, contested=contested)
