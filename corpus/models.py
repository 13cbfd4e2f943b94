"""Documents mirror their raw-SQL table (`managed = False`).

There is deliberately no Chunk model: chunk rows (text, vectors and anything derived from
them) are read and written only through tenants.scope.TenantScope, so an ORM shortcut to
another tenant's text does not exist to be misused. tests/test_source_lint.py enforces it.
"""

from __future__ import annotations

from django.db import models

from tenants.fields import TenantForeignKey
from tenants.models import Audience, LogMirror, Mirror, Tenant


class Document(Mirror):
    """One source file, changelog entry or ticket of a tenant, readable by one audience; its
    chunks (raw SQL only, corpus/ingest/store.py) are what search reads."""

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
    superseded_by = TenantForeignKey("self", null=True, blank=True, on_delete=models.RESTRICT, related_name="+")
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
    """An upload waiting for, or done with, the background ingest (corpus.sources.jobs)."""

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


class WebSource(LogMirror):
    """A website a tenant syncs its documents from (corpus.sources.websync, docs/decisions/0055)."""

    class Kind(models.TextChoices):
        START = "start", "Start URL (follow links on the same host)"
        SITEMAP = "sitemap", "sitemap.xml"

    class Schedule(models.TextChoices):
        DAILY = "daily", "Daily"
        WEEKLY = "weekly", "Weekly"
        MANUAL = "manual", "Manual (sync now only)"

    class Status(models.TextChoices):
        NEVER = "never", "Never run"
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="web_sources")
    audience = models.ForeignKey(Audience, on_delete=models.RESTRICT, related_name="+")
    name = models.CharField(max_length=200, blank=True, default="")
    start_url = models.CharField(max_length=2000)
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.START)
    # One pattern a line, matched against the URL's path (fnmatch: /docs/*).
    include_patterns = models.TextField(blank=True, default="")
    exclude_patterns = models.TextField(blank=True, default="")
    page_limit = models.IntegerField(default=200)
    schedule = models.CharField(max_length=8, choices=Schedule.choices, default=Schedule.MANUAL)
    # The scheduled run in force: a queued scheduled run whose time is not this one is stale.
    next_run_at = models.DateTimeField(null=True, blank=True)
    last_status = models.CharField(max_length=16, choices=Status.choices, default=Status.NEVER)
    last_run_at = models.DateTimeField(null=True, blank=True)
    last_report = models.JSONField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    created_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta(LogMirror.Meta):
        db_table = "corpus_websource"

    def __str__(self) -> str:
        return self.name or self.start_url


class WebPage(Mirror):
    """One URL a web source fetched or refused, with what the next fetch needs to be conditional."""

    class Status(models.TextChoices):
        NEW = "new", "New"
        INGESTED = "ingested", "Ingested"
        UNCHANGED = "unchanged", "Unchanged"
        SKIPPED = "skipped", "Skipped"
        ERROR = "error", "Error"
        GONE = "gone", "Gone (archived)"
        DUPLICATE = "duplicate", "Duplicate of its canonical URL"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    source = TenantForeignKey(WebSource, on_delete=models.CASCADE, related_name="pages")
    url = models.CharField(max_length=2000)
    # The document's identity: <link rel=canonical> on the same host, else the URL after redirects.
    canonical_url = models.CharField(max_length=2000, blank=True, default="")
    etag = models.CharField(max_length=500, blank=True, default="")
    last_modified = models.CharField(max_length=100, blank=True, default="")
    document = TenantForeignKey(Document, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.NEW)
    http_status = models.IntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    # Same-host links of the last good fetch: a page that answers 304 is followed through them.
    links = models.JSONField(default=list)
    fetched_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta(Mirror.Meta):
        db_table = "corpus_webpage"
        ordering = ["url"]
        constraints = [models.UniqueConstraint(fields=["tenant", "source", "url"],
                                               name="corpus_webpage_source_url_uniq")]

    def __str__(self) -> str:
        return self.url
