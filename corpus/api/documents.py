"""GET /documents, GET and DELETE /documents/{slug}, POST /documents/{slug}/archive and /restore.

The key decides the tenant and the audiences: a document of another tenant, or of an audience
the key does not hold, is a 404 with the same body as one that never existed. Writes need what
an upload needs, the document's audience among the key's (corpus/api/uploads.py). A slug is unique per
source type; without `type` the one visible document of that slug is meant, and two visible
ones are a 409 naming their types. The writes are corpus.ingest.lifecycle's.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import PurePath
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from pydantic import Field

from corpus.api.schemas import ErrorOut
from corpus.ingest.flow import SourceType
from corpus.ingest.lifecycle import (DocumentStatus, DocumentAmbiguous, DocumentNotFound, LifecycleOutcome, LifecycleRefused,
                              contested_document_ids, document_archive, document_delete, document_find, document_page,
                              document_restore, document_state)
from corpus.models import Document
from tenants.apierrors import InvalidRequest, NotFound
from tenants.apikeys import KeyPrincipal, request_principal
from tenants.models import Audience

router = Router(tags=["documents"])

# 413: a value over its maxLength, by design (docs/decisions/0014-api-shape.md).
ERRORS: dict[int, type[Schema]] = {401: ErrorOut, 404: ErrorOut, 409: ErrorOut, 413: ErrorOut, 422: ErrorOut,
                                   429: ErrorOut}


class DocumentOut(Schema):
    slug: str
    type: str = Field(description="source type: doc, changelog, ticket or pdf")
    title: str
    audience: str
    status: Literal["live", "archived", "superseded"]
    contested: bool = Field(description="some passage of it is tagged as contradicted by another document")
    version: str
    effective_date: date | None
    chunk_count: int
    token_count: int
    origin: Literal["upload", "command", "website", "escalation"]
    origin_ref: str = Field(description="the file name, the page's URL or the escalation it came from")
    fetched_at: datetime | None
    updated_at: datetime = Field(description="when it was last ingested or changed state")


class DocumentListOut(Schema):
    total: int
    limit: int
    offset: int
    documents: list[DocumentOut]


class DocumentFilters(Schema):
    status: DocumentStatus | None = None
    type: SourceType | None = None
    audience: str | None = Field(None, max_length=63)
    limit: int = Field(20, ge=1, le=100)
    offset: int = Field(0, ge=0, le=1_000_000)


def _principal(request: HttpRequest) -> tuple[KeyPrincipal, list[int]]:
    # A repeated query parameter is an array where the document says one value: refused, not
    # silently read as its last value.
    repeated = sorted(name for name in request.GET if len(request.GET.getlist(name)) > 1)
    if repeated:
        raise InvalidRequest(f"query parameter {repeated[0]!r} given more than once; give it once")
    principal = request_principal(request)
    held = list(Audience.objects.filter(tenant=principal.tenant, slug__in=list(principal.audiences))
                .values_list("id", flat=True))
    return principal, held


def _body(document: Document, *, contested: bool) -> dict[str, Any]:
    # The ingest command's reference is a path on the server: its file name is enough for a client.
    ref = PurePath(document.origin_ref).name if document.origin == Document.Origin.COMMAND else document.origin_ref
    return {"slug": document.slug, "type": document.source_type, "title": document.title,
            "audience": document.audience.slug, "status": document_state(document), "contested": contested,
            "version": document.version, "effective_date": document.effective_date,
            "chunk_count": document.chunk_count, "token_count": document.token_count, "origin": document.origin,
            "origin_ref": ref, "fetched_at": document.fetched_at, "updated_at": document.updated_at}


def _find(request: HttpRequest, slug: str, source_type: str | None) -> tuple[KeyPrincipal, list[int], Document]:
    principal, held = _principal(request)
    try:
        document = document_find(tenant=principal.tenant, slug=slug, source_type=source_type, audience_ids=held)
    except DocumentNotFound as exc:
        raise NotFound(f"no document {slug!r}") from exc
    except DocumentAmbiguous as exc:
        raise InvalidRequest(str(exc), status=409, code="ambiguous") from exc
    return principal, held, document


def _detail(principal: KeyPrincipal, held: list[int], slug: str, source_type: str) -> dict[str, Any]:
    document = document_find(tenant=principal.tenant, slug=slug, source_type=source_type, audience_ids=held)
    contested = document.pk in contested_document_ids(tenant_id=principal.tenant.id, audience_ids=held,
                                                      document_ids=[document.pk])
    return _body(document, contested=contested)


# GET /documents shares its URL with the upload (POST) and so is added to corpus/api/uploads.py's router:
# Django matches a URL once, whatever the method, so one path lives in one router.
LIST_RESPONSES = {200: DocumentListOut, **ERRORS}
LIST_SUMMARY = "The documents the key may read, newest change first; filter by status, type and audience"


def documents_list(request: HttpRequest, filters: Query[DocumentFilters]) -> Any:
    principal, held = _principal(request)
    audience_id = None
    if filters.audience is not None:
        # An audience the key does not hold lists nothing, like one that does not exist.
        audience_id = dict(Audience.objects.filter(tenant=principal.tenant, id__in=held)
                           .values_list("slug", "id")).get(filters.audience, -1)
    page = document_page(tenant=principal.tenant, audience_ids=held, state=filters.status,
                         source_type=filters.type, audience_id=audience_id, limit=filters.limit,
                         offset=filters.offset)
    return Status(200, {"total": page.total, "limit": filters.limit, "offset": filters.offset,
                        "documents": [_body(d, contested=d.pk in page.contested) for d in page.documents]})


# The action routes come before the plain slug route: a slug may hold slashes (a folder's
# path), and Django matches URLs in order, whatever the method.
@router.post("/documents/{path:slug}/archive", response={200: DocumentOut, **ERRORS},
             summary="Archive a document: its passages leave search, statistics and cached answers")
def document_archive_endpoint(request: HttpRequest, slug: str,
                              type: SourceType | None = None) -> Any:  # noqa: A002
    return _write(request, slug, type, document_archive)


@router.post("/documents/{path:slug}/restore", response={200: DocumentOut, **ERRORS},
             summary="Restore an archived document to search (a superseded one is refused, 409)")
def document_restore_endpoint(request: HttpRequest, slug: str,
                              type: SourceType | None = None) -> Any:  # noqa: A002
    return _write(request, slug, type, document_restore)


@router.get("/documents/{path:slug}", response={200: DocumentOut, **ERRORS},
            summary="One document the key may read; `type` chooses among documents sharing a slug")
def document_detail(request: HttpRequest, slug: str,
                    type: SourceType | None = None) -> Any:  # noqa: A002
    principal, held, document = _find(request, slug, type)
    return Status(200, _detail(principal, held, document.slug, document.source_type))


@router.delete("/documents/{path:slug}", response={204: None, **ERRORS},
               summary="Delete a document and its passages; documents it superseded stay archived")
def document_delete_endpoint(request: HttpRequest, slug: str,
                             type: SourceType | None = None) -> Any:  # noqa: A002
    principal, held, document = _find(request, slug, type)
    _run(document_delete, principal, held, document)
    return Status(204, None)


def _write(request: HttpRequest, slug: str, source_type: str | None, action: Any) -> Any:
    principal, held, document = _find(request, slug, source_type)
    _run(action, principal, held, document)
    return Status(200, _detail(principal, held, document.slug, document.source_type))


def _run(action: Any, principal: KeyPrincipal, held: list[int], document: Document) -> LifecycleOutcome:
    try:
        outcome: LifecycleOutcome = action(tenant=principal.tenant, document_ids=[document.pk], audience_ids=held)
    except DocumentNotFound as exc:  # gone between the lookup and the lock
        raise NotFound(f"no document {document.slug!r}") from exc
    except LifecycleRefused as exc:
        raise InvalidRequest(str(exc), status=409, code="conflict") from exc
    return outcome
