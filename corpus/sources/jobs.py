"""Uploads from the admin or the API become background ingest jobs.

The job runs the very same `ingest_paths` as the command, through Django's task framework
API (the django-tasks backport; the database backend by default, with the worker that
`make run` starts), so a multi-machine deployment swaps the backend by configuration.
Uploaded files go through the default storage (STORAGES["default"]: a directory every app
and worker process mounts, or an S3-compatible bucket), never a path on the disk of the
process that took the upload: the worker that runs the job may be another machine
(docs/decisions/0049).
"""

from __future__ import annotations

import re
import secrets
import shutil
import tempfile
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar, cast

from django.core.files.storage import storages
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone
from django_tasks import task

from corpus.config import ParseLimits
from corpus.ingest.flow import SOURCE_TYPES, Writer, ingest_paths
from corpus.models import Document, IngestJob
from corpus.ingest.origin import DocumentOrigin
from tenants.models import Audience, Tenant


class UploadRejected(ValueError):
    pass


def _safe_name(name: str) -> str:
    """Keep folder structure (it makes slugs) but never let a name climb out of the job folder."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".", "..", "/")]
    if not parts:
        raise UploadRejected(f"file name {name!r} is empty after cleaning")
    return "/".join(parts)


def ingest_job_create(
    *, tenant: Tenant, files: Sequence[UploadedFile], writer_audiences: Sequence[str], audience: str = "public",
    source_type: str = "doc", created_by_id: int | None = None, origin: str = Document.Origin.UPLOAD,
    origin_ref: str = "",
) -> IngestJob:
    """Queue an upload. `writer_audiences` are the audiences the key or staff member holds; the
    job writes into nothing else, whatever the files themselves say (docs/decisions/0031)."""
    if not files:
        raise UploadRejected("no files uploaded")
    if source_type not in SOURCE_TYPES:
        raise UploadRejected(f"source type {source_type!r} is not one of {', '.join(SOURCE_TYPES)}")
    if audience not in writer_audiences:
        # One answer whether or not the audience exists: the refusal confirms nothing.
        raise UploadRejected(f"this upload may not write to audience {audience!r}")
    if not Audience.objects.filter(tenant=tenant, slug=audience).exists():
        raise UploadRejected(f"tenant {tenant.slug} has no audience {audience!r}")
    limit = ParseLimits.from_settings().max_file_bytes
    for upload in files:
        if upload.size is not None and upload.size > limit:
            raise UploadRejected(f"{upload.name} is {upload.size:,} bytes, over the {limit:,}-byte limit")
    with transaction.atomic():
        job = IngestJob.objects.create(tenant=tenant, audience=audience, source_type=source_type, upload_dir="",
                                       writer_audiences=sorted(set(writer_audiences)),
                                       created_by_id=created_by_id, origin=origin, origin_ref=origin_ref[:2000])
        # Job ids start again at 1 in a fresh database; a random suffix keeps an older job's
        # files (a kept upload store next to a reset database) out of this job's folder.
        folder = f"ingest/{job.pk}-{secrets.token_hex(6)}"
        storage = storages["default"]
        names = [storage.save(f"{folder}/{_safe_name(upload.name or 'upload')}", upload)[len(folder) + 1:]
                 for upload in files]
        IngestJob.objects.filter(tenant_id=tenant.id, pk=job.pk).update(upload_dir=folder, file_names=names)
        job.upload_dir, job.file_names = folder, names
        transaction.on_commit(lambda: _enqueue(job_id=job.pk, tenant_id=tenant.id))
    return job


def ingest_job_visible(*, tenant: Tenant, audiences: Collection[str], job_id: int) -> IngestJob | None:
    """The job, when a principal holding `audiences` may read it; None exactly as for a missing one.

    A job's report and file names tell what it read and wrote: it is visible when every audience
    its writer held lies within `audiences` (jsonb <@, the console's rule for jobs) and so does
    the audience it wrote into by default. A job queued by a wider key than the reader's may
    name documents of an audience the reader lacks, even when its default audience is public."""
    held = sorted(set(audiences))
    # Index: corpus_ingestjob primary key; the tenant filter as on every query.
    return IngestJob.objects.filter(tenant=tenant, pk=job_id, writer_audiences__contained_by=held,
                                    audience__in=held).first()


def _enqueue(*, job_id: int, tenant_id: int) -> None:
    result = run_ingest_job.enqueue(job_id=job_id, tenant_id=tenant_id)
    IngestJob.objects.filter(tenant_id=tenant_id, pk=job_id).update(task_id=str(result.id))


@task()
def run_ingest_job(job_id: int, tenant_id: int | None = None) -> dict[str, object]:
    if tenant_id is None:
        # A job queued before the tenant travelled with it: one read of every shard, once.
        tenant_id = IngestJob.objects.values_list("tenant_id", flat=True).get(pk=job_id)
    return ingest_job_run(job_id=job_id, tenant_id=tenant_id)


def ingest_job_run(*, job_id: int, tenant_id: int) -> dict[str, object]:
    # Every statement names the tenant as well as the id: on Citus that routes it to the
    # tenant's shard instead of every shard (docs/decisions/0120).
    jobs = IngestJob.objects.filter(tenant_id=tenant_id, pk=job_id)
    job = jobs.select_related("tenant").get()
    jobs.update(status=IngestJob.Status.RUNNING, started_at=timezone.now())
    folder = Path(job.upload_dir)
    try:
        with _uploaded_files(job) as folder:
            report = ingest_paths(tenant=job.tenant, paths=[folder], audience=job.audience,
                                  source_type=job.source_type, writer=Writer.holding(job.writer_audiences),
                                  origin=DocumentOrigin(kind=job.origin, root=folder, ref=job.origin_ref))
    except Exception as exc:  # the job row must say what happened, whatever it was
        error = upload_relative(f"{type(exc).__name__}: {exc}", roots=[str(folder), *_upload_roots(job)])
        jobs.update(status=IngestJob.Status.FAILED, error=error, finished_at=timezone.now())
        raise
    # The report reads paths on the worker (a temporary copy, the storage's directory): it is kept
    # naming each file as the uploader did, never a path of the server (issue 45).
    data = upload_relative(report.as_dict(), roots=[str(folder), *_upload_roots(job)])
    status = IngestJob.Status.SUCCEEDED if report.ok else IngestJob.Status.FAILED
    jobs.update(status=status, report=data, finished_at=timezone.now(),
                error="" if report.ok else f"{len(report.failed)} file(s) failed")
    return data


JsonValue = TypeVar("JsonValue")


def upload_relative(value: JsonValue, *, roots: Sequence[str]) -> JsonValue:
    """`value` (a report's JSON, an error) with every path inside the job's folder named relative
    to it: what the uploader called the file. `roots` are the folder's names on this machine."""
    # Longest first, so a folder's resolved name is replaced before a shorter link to it.
    folders = sorted({name for root in roots if root
                      for name in (root, str(Path(root).resolve()) if Path(root).is_absolute() else root)},
                     key=len, reverse=True)
    names = {PurePosixPath(root).name for root in roots if root}

    def fix(text: str) -> str:
        for folder in folders:
            text = text.replace(folder + "/", "").replace(folder, ".")
        # A copy made elsewhere (the temporary folder of a remote store's job, another worker's
        # mount) still ends in the job's folder name, which is random per job.
        for name in names:
            text = re.sub(rf"[^\s\"'(\[]*/{re.escape(name)}/", "", text)
        return text

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return fix(item)
        if isinstance(item, list):
            return [walk(entry) for entry in item]
        if isinstance(item, dict):
            return {walk(key): walk(entry) for key, entry in item.items()}
        return item
    return cast(JsonValue, walk(value))


def _upload_roots(job: IngestJob) -> list[str]:
    """Where the job's folder is on this machine: the storage's directory, when it has one."""
    if not job.upload_dir or Path(job.upload_dir).is_absolute():
        return [job.upload_dir]
    try:
        return [job.upload_dir, storages["default"].path(job.upload_dir)]
    except NotImplementedError:  # a remote store: only the folder's name is known
        return [job.upload_dir]


def ingest_job_shown(job: IngestJob) -> tuple[dict[str, Any] | None, str]:
    """The job's report and error as the API and the console show them. Jobs run before reports
    were kept relative (issue 45) named absolute paths: they are read the same way."""
    roots = _upload_roots(job)
    return upload_relative(job.report, roots=roots), upload_relative(job.error, roots=roots)


@contextmanager
def _uploaded_files(job: IngestJob) -> Iterator[Path]:
    """The job's files as a local folder: the storage's own directory when it has one, else a
    temporary copy. A job queued before uploads went through storage names an absolute path."""
    if Path(job.upload_dir).is_absolute():
        yield Path(job.upload_dir)
        return
    storage = storages["default"]
    try:
        yield Path(storage.path(job.upload_dir))
        return
    except NotImplementedError:  # a remote store (S3-compatible): no local path
        pass
    with tempfile.TemporaryDirectory(prefix="ingest-") as temporary:
        # The folder keeps its name: documents' slugs come from paths inside it.
        folder = Path(temporary) / PurePosixPath(job.upload_dir).name
        for name in job.file_names:
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with storage.open(f"{job.upload_dir}/{name}", "rb") as source, target.open("wb") as out:
                shutil.copyfileobj(source, out)
        yield folder
