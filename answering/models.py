"""Traces and escalations, mirrored from raw SQL (answering/migrations/0001_initial.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from corpus.models import IngestJob
from tenants.models import LogMirror, Tenant


class Trace(LogMirror):
    class Action(models.TextChoices):
        ANSWERED = "answered", "Answered"
        ESCALATED = "escalated", "Escalated"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    conversation_id = models.CharField(max_length=64, blank=True, default="")
    audiences = models.JSONField(default=list)
    question = models.TextField()
    rewritten_query = models.TextField(blank=True, default="")
    history_turns = models.IntegerField(default=0)
    action = models.CharField(max_length=16, choices=Action.choices)
    answer = models.TextField(blank=True, default="")
    generator = models.CharField(max_length=200, blank=True, default="")
    provider = models.CharField(max_length=200, blank=True, default="")
    model = models.CharField(max_length=200, blank=True, default="")
    input_tokens = models.IntegerField(default=0)
    output_tokens = models.IntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    cache_hit = models.BooleanField(default=False)
    gate = models.JSONField(default=dict)
    retrieval = models.JSONField(default=dict)
    citations = models.JSONField(default=list)
    stage_ms = models.JSONField(default=dict)
    details = models.JSONField(default=dict)
    feedback = models.SmallIntegerField(null=True, blank=True)
    feedback_comment = models.TextField(blank=True, default="")

    class Meta(LogMirror.Meta):
        db_table = "answering_trace"

    def __str__(self) -> str:
        return f"trace #{self.pk} ({self.action})"


class Escalation(LogMirror):
    """A question the desk would not answer, waiting for a person; agents work it in the
    console (answering/console/escalations.py)."""

    class Reason(models.TextChoices):
        WEAK_RETRIEVAL = "weak_retrieval", "Weak retrieval"
        MODEL_DECLINED = "model_declined", "Model declined"
        PROVIDERS_FAILED = "providers_failed", "Every provider failed"

    class Status(models.TextChoices):
        """Open until an agent claims it; resolved once the agent has written the resolution,
        which becomes a ticket document (answering/console/escalations.py)."""

        OPEN = "open", "Open"
        CLAIMED = "claimed", "Claimed"
        RESOLVED = "resolved", "Resolved"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    trace = models.OneToOneField(Trace, on_delete=models.CASCADE, related_name="escalation")
    conversation_id = models.CharField(max_length=64, blank=True, default="")
    question = models.TextField()
    history = models.JSONField(default=list)
    candidates = models.JSONField(default=list)
    reason = models.CharField(max_length=32, choices=Reason.choices)
    detail = models.TextField(blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+")
    resolution_note = models.TextField(blank=True, default="")
    resolved_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    # The ingest job that turned the resolution into a ticket document (answering/console/escalations.py).
    knowledge_job = models.ForeignKey(IngestJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta(LogMirror.Meta):
        db_table = "answering_escalation"

    def __str__(self) -> str:
        return f"escalation #{self.pk} ({self.reason}, {self.status})"
