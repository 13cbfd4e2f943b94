"""POST /documents (upload → the background ingest job) and GET /jobs/{id}.

The tenant comes from the API key; a key writes only into audiences it may read, so a
public-only key cannot plant internal documents: the form field is checked here, and every
file's own audience, replaced document, supersession and manifest in the job (corpus.ingest.rights.Writer).
A job is read back only by a key holding every audience its writer held (corpus.sources.jobs.ingest_job_visible),
and its report names files as the uploader did, never by a path on the server.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja import File, Form, Router, Schema, Status
from ninja.files import UploadedFile

from corpus.api.schemas import ErrorOut
from corpus.ingest.flow import SourceType
from corpus.sources.jobs import UploadRejected, ingest_job_create, ingest_job_shown, ingest_job_visible
from corpus.models import IngestJob
from tenants.apierrors import InvalidRequest, NotFound, PayloadTooLarge
from tenants.apikeys import request_principal

MAX_UPLOAD_FILES = 20

router = Router(tags=["documents"])


class JobOut(Schema):
    id: int
    status: str
    audience: str
    source_type: str
    file_names: list[str]
    report: dict[str, Any] | None = None
    error: str = ""
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None


def _job_body(job: IngestJob) -> dict[str, Any]:
    report, error = ingest_job_shown(job)
    return {"id": job.pk, "status": job.status, "audience": job.audience, "source_type": job.source_type,
            "file_names": list(job.file_names or []), "report": report, "error": error,
            "created_at": job.created_at, "started_at": job.started_at, "finished_at": job.finished_at}


@router.post("/documents", response={202: JobOut, 400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 413: ErrorOut, 422: ErrorOut,
                                     429: ErrorOut},
             summary="Upload files (Markdown, HTML, text, PDF) for ingestion; returns the job to poll")
def documents_upload(
    request: HttpRequest,
    files: list[UploadedFile] = File(..., min_length=1, description=f"up to {MAX_UPLOAD_FILES} files"),
    audience: str = Form("public", max_length=63),
    # A Literal (corpus.ingest.SourceType), so the document lists the allowed values (an enum) instead of any string.
    source_type: SourceType = Form("doc"),
) -> Any:
    principal = request_principal(request)
    if len(files) > MAX_UPLOAD_FILES:
        raise PayloadTooLarge(f"{len(files)} files; at most {MAX_UPLOAD_FILES} per upload")
    limit = int(settings.INGEST_MAX_FILE_BYTES)
    for upload in files:
        if upload.size is not None and upload.size > limit:
            raise PayloadTooLarge(f"{upload.name} is {upload.size:,} bytes; the limit is {limit:,}")
    if audience not in principal.audiences:
        # 403, not 422: the body is well-formed, the key lacks the right. The same answer for an
        # audience that does not exist, so it confirms nothing.
        raise InvalidRequest(f"this key cannot write to audience {audience!r}", status=403, code="forbidden")
    try:
        job = ingest_job_create(tenant=principal.tenant, files=files, audience=audience, source_type=source_type,
                                writer_audiences=principal.audiences)
    except UploadRejected as exc:
        raise InvalidRequest(str(exc)) from exc
    return Status(202, _job_body(job))


@router.get("/jobs/{job_id}", response={200: JobOut, 401: ErrorOut, 404: ErrorOut, 422: ErrorOut, 429: ErrorOut},
            summary="An ingestion job's status and report")
def job_detail(request: HttpRequest, job_id: int) -> Any:
    principal = request_principal(request)
    # Another tenant's job, and one whose writer held an audience this key lacks, is exactly as
    # absent as a job that never existed (issue 45: the report names what the job read).
    if not 0 < job_id < 2**63:
        raise NotFound(f"no job {job_id}")
    job = ingest_job_visible(tenant=principal.tenant, audiences=principal.audiences, job_id=job_id)
    if job is None:
        raise NotFound(f"no job {job_id}")
    return Status(200, _job_body(job))


# Listing, reading, archiving, restoring and deleting documents: a module of their own, served
# under this router so config/api.py keeps one documents router (imported last: it reuses ErrorOut).
from corpus.api.documents import LIST_RESPONSES, LIST_SUMMARY, documents_list  # noqa: E402
from corpus.api.documents import router as lifecycle_router  # noqa: E402

router.add_api_operation("/documents", ["GET"], documents_list, response=LIST_RESPONSES, summary=LIST_SUMMARY)
router.add_router("/", lifecycle_router)
