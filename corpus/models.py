"""Documents mirror their raw-SQL table (`managed = False`).

There is deliberately no Chunk model: chunk rows (text, vectors and anything derived from
them) are read and written only through tenants.scope.TenantScope, so an ORM shortcut to
another tenant's text does not exist to be misused. tests/test_source_lint.py enforces it.
"""

from __future__ import annotations

from django.db import models

from tenants.models import Audience, LogMirror, Mirror, Tenant


class Document(Mirror):
    """One source file, changelog entry or ticket of a tenant, readable by one audience; its
    chunks (raw SQL only, corpus/store.py) are what search reads."""

    class SourceType(models.TextChoices):
        DOC = "doc", "Documentation"
        CHANGELOG = "changelog", "Changelog entry"
        TICKET = "ticket", "Resolved ticket"
        PDF = "pdf", "PDF"

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        ARCHIVED = "archived", "Archived"

    class Origin(models.TextChoices):
        UPLOAD = "upload", "Upload"
        COMMAND = "command", "Ingest command"
        WEBSITE = "website", "Website sync"
        ESCALATION = "escalation", "Escalation resolution"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="documents")
    # RESTRICT, like the table's NO ACTION: an audience in use stays, a tenant goes whole.
    audience = models.ForeignKey(Audience, on_delete=models.RESTRICT, related_name="documents")
    source_type = models.CharField(max_length=16, choices=SourceType.choices, default=SourceType.DOC)
    slug = models.CharField(max_length=500)
    title = models.CharField(max_length=500)
    version = models.CharField(max_length=100, blank=True, default="")
    effective_date = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # RESTRICT, like the table's NO ACTION: deleting a successor would lose the supersession
    # history; deleting both in one operation (a tenant's documents) passes, as in SQL.
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.RESTRICT, related_name="+")
    content_hash = models.CharField(max_length=64)
    language = models.CharField(max_length=63, default="english")
    source_path = models.CharField(max_length=1000, blank=True, default="")
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.COMMAND)
    # The file name, the page's URL or the escalation a document came from.
    origin_ref = models.CharField(max_length=2000, blank=True, default="")
    fetched_at = models.DateTimeField(null=True, blank=True)
    chunk_count = models.IntegerField(default=0)
    token_count = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(Mirror.Meta):
        db_table = "corpus_document"
        ordering = ["tenant__slug", "source_type", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "source_type", "slug"], name="corpus_document_tenant_slug_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.tenant.slug}:{self.source_type}/{self.slug}"


class IngestJob(LogMirror):
    """An upload waiting for, or done with, the background ingest (corpus.jobs)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="ingest_jobs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    audience = models.CharField(max_length=63, default="public")
    # The audiences the principal who queued the job holds: the job writes into nothing else.
    writer_audiences = models.JSONField(default=list)
    source_type = models.CharField(max_length=16, default="doc")
    origin = models.CharField(max_length=16, choices=Document.Origin.choices, default=Document.Origin.UPLOAD)
    origin_ref = models.CharField(max_length=2000, blank=True, default="")
    upload_dir = models.CharField(max_length=1000)
    file_names = models.JSONField(default=list)
    report = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    task_id = models.CharField(max_length=64, blank=True, default="")
    created_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta(LogMirror.Meta):
        db_table = "corpus_ingestjob"

    def __str__(self) -> str:
        return f"ingest #{self.pk} ({self.tenant.slug}, {self.status})"
