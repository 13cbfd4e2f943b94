"""Traces and escalations, mirrored from raw SQL (answering/migrations/0001_initial.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from corpus.models import IngestJob
from tenants.fields import TenantForeignKey, TenantOneToOneField
from tenants.models import LogMirror, Mirror, Tenant


class NotificationStatus(models.TextChoices):
    """Where an email notification stands, on the row it is about (answering/handoff/outbox.py)."""

    NONE = "", "None"
    PENDING = "pending", "Pending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"
    SKIPPED = "skipped", "Nobody to send to"


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
        # Not an abstention: the asker of an answer asked for a person (answering/chat/views.py, person_turn).
        ASKER_REQUEST = "asker_request", "The asker asked for a person"

    class Status(models.TextChoices):
        """Open until an agent claims it; resolved once the agent has written the resolution,
        which becomes a ticket document (answering/console/escalations.py)."""

        OPEN = "open", "Open"
        CLAIMED = "claimed", "Claimed"
        RESOLVED = "resolved", "Resolved"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    trace = TenantOneToOneField(Trace, on_delete=models.CASCADE, related_name="escalation")
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
    # RESTRICT, not SET NULL: Citus refuses SET NULL on a key holding tenant_id (docs/decisions/0048).
    knowledge_job = TenantForeignKey(IngestJob, null=True, blank=True, on_delete=models.RESTRICT, related_name="+")
    # The knowledge-base article written from the resolved thread, apart from the personal reply
    # (answering/console/articles.py, docs/decisions/0104): a draft until a member holding
    # `article_audience` publishes it ('' audience: no draft).
    article_question = models.TextField(blank=True, default="")
    article_answer = models.TextField(blank=True, default="")
    article_audience = models.CharField(max_length=63, blank=True, default="")
    # The asker's way back: /t/<tenant>/f/<public_id>/, random, never the primary key (docs/decisions/0044).
    public_id = models.CharField(max_length=32)
    first_reply_at = models.DateTimeField(null=True, blank=True)
    agents_notified_at = models.DateTimeField(null=True, blank=True)
    contact_email = models.CharField(max_length=254, blank=True, default="")
    # The agents' alert of this escalation, one by one (none in digest mode); retried with backoff.
    alert_status = models.CharField(max_length=8, choices=NotificationStatus.choices, blank=True, default="")
    alert_attempts = models.IntegerField(default=0)
    alert_error = models.CharField(max_length=300, blank=True, default="")
    alert_next_at = models.DateTimeField(null=True, blank=True)

    class Meta(LogMirror.Meta):
        db_table = "answering_escalation"

    def __str__(self) -> str:
        return f"escalation #{self.pk} ({self.reason}, {self.status})"


class EscalationMessage(Mirror):
    """One message of an escalation's thread, in order: the asker's (from the follow-up page)
    or an agent's (from the escalation page, delivered by answering/handoff/followups.py)."""

    class Kind(models.TextChoices):
        ASKER = "asker", "Asker"
        AGENT = "agent", "Agent"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    escalation = TenantForeignKey(Escalation, on_delete=models.CASCADE, related_name="messages")
    author_kind = models.CharField(max_length=8, choices=Kind.choices)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    # The email of an agent's message to the asker who left a contact; retried with backoff.
    email_status = models.CharField(max_length=8, choices=NotificationStatus.choices, blank=True, default="")
    email_attempts = models.IntegerField(default=0)
    email_error = models.CharField(max_length=300, blank=True, default="")
    email_next_at = models.DateTimeField(null=True, blank=True)

    class Meta(Mirror.Meta):
        db_table = "answering_escalation_message"
        ordering = ["created_at", "id"]


class HandoffSettings(Mirror):
    """A tenant's handoff settings; a tenant without a row has the defaults (answering/handoff/config.py)."""

    class NotifyMode(models.TextChoices):
        EACH = "each", "One email per escalation"
        DIGEST = "digest", "A digest of new escalations"

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, primary_key=True, related_name="+")
    notify_mode = models.CharField(max_length=16, choices=NotifyMode.choices, default=NotifyMode.EACH)
    overdue_hours = models.IntegerField(default=24, help_text="An escalation without an agent reply after this "
                                                               "many hours is flagged overdue.")
    retention_days = models.IntegerField(default=90, help_text="Questions, conversations and contacts older than "
                                                                "this are anonymised (docs/decisions/0046).")
    webhook_url = models.CharField(max_length=2000, blank=True, default="")
    webhook_secret = models.CharField(max_length=128, blank=True, default="")
    agent_display_name = models.CharField(max_length=80, default="Support team",
                                          help_text="The name askers see on every agent reply (follow-up page), "
                                                    "instead of the agent's user name.")

    class Meta(Mirror.Meta):
        db_table = "answering_handoff_settings"
        verbose_name = "handoff settings"
        verbose_name_plural = "handoff settings"

    def __str__(self) -> str:
        return f"handoff settings of {self.tenant_id}"


class WebhookDelivery(LogMirror):
    """One event for a tenant's webhook and every attempt to deliver it, kept for the admin's
    delivery log and its redeliver action (answering/handoff/webhooks.py)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    escalation = TenantForeignKey(Escalation, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    trace = TenantForeignKey(Trace, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    # The audiences of the trace the event came from: the console shows the row only to members
    # holding them all, like the trace (answering/console/handoff.py).
    audiences = models.JSONField()
    event = models.CharField(max_length=40)
    url = models.CharField(max_length=2000)
    payload = models.JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempt_count = models.IntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    attempts = models.JSONField(default=list)  # one entry per try: when, status code or error, time taken

    class Meta(LogMirror.Meta):
        db_table = "answering_webhook_delivery"
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"{self.event} #{self.pk} ({self.status})"
