"""Retention and erasure of the personal data the answer desk holds (docs/decisions/0046).

Personal data here: questions and conversations (traces, escalations with their client-sent
history), thread messages, contact emails, webhook payloads and cache entries built from
questions. Retention anonymises in place rather than deleting, so the dashboard's numbers
(rates, costs, latencies, reply and resolution times) survive; erasure deletes one person's
rows outright, wherever their questions went.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from answering.handoff.config import handoff_config
from answering.handoff.links import followup_url
from answering.models import Escalation, EscalationMessage, Trace, WebhookDelivery
from cachelayer import service as cache
from tenants.models import Tenant
from tenants.rls import tenant_context

# Traces: everything a person wrote or was told goes; the numbers and the gate's decision stay.
# The new details are the stamp (a parameter) with the cache part set into it by jsonb_set, all
# IMMUTABLE: Citus refuses a STABLE function such as jsonb_build_object() given a column in an
# UPDATE of a distributed table (docs/decisions/0121).
_ANONYMISE_TRACES = """
UPDATE answering_trace
   SET question = '', rewritten_query = '', answer = '', conversation_id = '', feedback_comment = '',
       citations = '[]',
       details = jsonb_strip_nulls(jsonb_set(%(stamp)s::jsonb, '{cache}', coalesce(details -> 'cache', 'null'::jsonb)))
 WHERE tenant_id = %(t)s AND created_at < %(before)s AND NOT (details ? 'anonymised_at')
"""
_ANONYMISE_ESCALATIONS = """
UPDATE answering_escalation
   SET question = '', history = '[]', contact_email = '', detail = '', resolution_note = '', conversation_id = '',
       alert_error = '', article_question = '', article_answer = '',
       -- an unpublished draft was written from the person's words and goes; a published one is a document
       article_audience = CASE WHEN knowledge_job_id IS NULL THEN '' ELSE article_audience END
 WHERE tenant_id = %(t)s AND created_at < %(before)s AND (question <> '' OR contact_email <> '')
"""
# Index for all three: the (tenant_id, created_at) or (tenant_id, escalation_id, created_at) indexes.
_DELETE_MESSAGES = """
DELETE FROM answering_escalation_message
 WHERE tenant_id = %(t)s AND escalation_id IN (
       SELECT id FROM answering_escalation WHERE tenant_id = %(t)s AND created_at < %(before)s)
"""
_DELETE_DELIVERIES = "DELETE FROM answering_webhook_delivery WHERE tenant_id = %(t)s AND created_at < %(before)s"


@dataclass(kw_only=True)
class RowCounts:
    """What a retention run or an erasure touched, by table."""

    # Rows holding the person's own words, then rows built from them.
    traces: int = 0
    escalations: int = 0
    messages: int = 0
    tenant: str  # keyword-only, so it may stand between the counts
    deliveries: int = 0
    cache_entries: int = 0


@dataclass(kw_only=True)
class RetentionReport(RowCounts):
    before: str


def retention_apply(*, tenant: Tenant, now: dt.datetime | None = None) -> RetentionReport:
    """Anonymise what is older than the tenant's retention period; delete messages, webhook
    deliveries and cache entries of that age. Idempotent: rows done once are not touched again."""
    now = now or timezone.now()
    before = now - dt.timedelta(days=handoff_config(tenant_id=tenant.id).retention_days)
    report = RetentionReport(tenant=tenant.slug, before=before.isoformat())
    params = {"t": tenant.id, "before": before,
              "stamp": json.dumps({"anonymised_at": now.isoformat()})}
    with tenant_context(tenant.id) as cursor:
        # Index: answering_trace_tenant_created_idx (tenant_id, created_at DESC).
        cursor.execute(_ANONYMISE_TRACES, params)
        report.traces = cursor.rowcount
        cursor.execute(_DELETE_MESSAGES, params)
        report.messages = cursor.rowcount
        # Index: answering_escalation_tenant_status_idx (tenant_id, status, created_at DESC).
        cursor.execute(_ANONYMISE_ESCALATIONS, params)
        report.escalations = cursor.rowcount
        # Index: answering_webhook_delivery_tenant_created_idx (tenant_id, created_at DESC).
        cursor.execute(_DELETE_DELIVERIES, params)
        report.deliveries = cursor.rowcount
    report.cache_entries = cache.purge_created_before(tenant_id=tenant.id, before=before)
    return report


@dataclass(kw_only=True)
class ErasureReport(RowCounts):
    contact: str
    # Tickets agents published from the person's questions: knowledge, kept, named for review.
    tickets: list[str] = field(default_factory=list)

    def summary(self) -> str:
        who = self.contact or "an anonymous asker"
        kept = f"; tickets kept in the knowledge base: {', '.join(self.tickets)}" if self.tickets else ""
        return (f"{who} on {self.tenant}: {self.traces} trace(s), {self.escalations} escalation(s), "
                f"{self.messages} message(s), {self.deliveries} webhook delivery(ies), "
                f"{self.cache_entries} cache entry(ies){kept}")


def _person(tenant_id: int, escalations: Q) -> tuple[list[int], list[str]]:
    """Inside a tenant context: the traces of a person (their escalations' traces and every
    trace of the same conversations) and the questions they asked. A stored conversation id
    names the principal that sent it (docs/decisions/0093), so another key or visitor using
    the same client id is never followed here."""
    rows = list(Escalation.objects.filter(escalations, tenant_id=tenant_id).values_list("trace_id",
                                                                                          "conversation_id"))
    conversations = sorted({c for _, c in rows if c})
    traces = Trace.objects.filter(Q(pk__in=[t for t, _ in rows]) | Q(conversation_id__in=conversations),
                                  tenant_id=tenant_id)
    found = list(traces.values_list("pk", "question", "rewritten_query"))
    return [pk for pk, _, _ in found], [text for _, q, r in found for text in (q, r) if text]


def _erase(tenant: Tenant, escalations: Q, contact: str) -> ErasureReport:
    report = ErasureReport(tenant=tenant.slug, contact=contact)
    with tenant_context(tenant.id):
        trace_ids, questions = _person(tenant.id, escalations)
        mine = Escalation.objects.filter(Q(trace_id__in=trace_ids) | escalations, tenant_id=tenant.id)
        escalation_ids = list(mine.values_list("pk", flat=True))
        report.tickets = [f"ESC-{pk}" for pk in mine.filter(knowledge_job__isnull=False).values_list("pk", flat=True)]
        report.messages = EscalationMessage.objects.filter(tenant_id=tenant.id,
                                                           escalation_id__in=escalation_ids).count()
        report.deliveries = WebhookDelivery.objects.filter(
            Q(escalation_id__in=escalation_ids) | Q(trace_id__in=trace_ids), tenant_id=tenant.id).count()
        report.escalations = len(escalation_ids)
        # Escalations, their messages and webhook deliveries go with their traces (ON DELETE CASCADE).
        # SQL naming the tenant, not QuerySet.delete(): Django's collector reads and deletes the
        # related rows by primary key alone, every shard on Citus (docs/decisions/0121).
        with connection.cursor() as cursor:
            params: dict[str, Any] = {"t": tenant.id, "e": escalation_ids, "tr": list(trace_ids)}
            cursor.execute("DELETE FROM answering_escalation WHERE tenant_id = %(t)s AND id = ANY(%(e)s)", params)
            cursor.execute("DELETE FROM answering_trace WHERE tenant_id = %(t)s AND id = ANY(%(tr)s)", params)
            report.traces = cursor.rowcount
    report.cache_entries = cache.purge_built_from(tenant_id=tenant.id, trace_ids=trace_ids, queries=questions)
    return report


def erase_contact(*, tenant: Tenant, email: str) -> ErasureReport:
    """Delete everything of the person who left `email` (case-insensitive) on this tenant."""
    email = email.strip()
    if not email:
        raise ValueError("an email address is needed")
    return _erase(tenant, Q(contact_email__iexact=email), email)


def erase_escalation_asker(*, tenant_id: int, escalation_id: int) -> ErasureReport:
    """The admin action: by the escalation's contact when it has one, else its conversation."""
    tenant = Tenant.objects.get(pk=tenant_id)
    with tenant_context(tenant_id):
        contact = Escalation.objects.filter(pk=escalation_id, tenant_id=tenant_id).values_list(
            "contact_email", flat=True).first() or ""
    if contact:
        return erase_contact(tenant=tenant, email=contact)
    return _erase(tenant, Q(pk=escalation_id), "")


def export_contact(*, tenant: Tenant, email: str) -> dict[str, Any]:
    """Everything held about the person who left `email`, as JSON-ready data."""
    with tenant_context(tenant.id):
        trace_ids, _ = _person(tenant.id, Q(contact_email__iexact=email.strip()))
        escalations = list(Escalation.objects.filter(Q(contact_email__iexact=email.strip()) | Q(trace_id__in=trace_ids),
                                                     tenant_id=tenant.id).order_by("created_at"))
        messages = list(EscalationMessage.objects.filter(tenant_id=tenant.id,
                                                         escalation_id__in=[e.pk for e in escalations]))
        traces = list(Trace.objects.filter(pk__in=trace_ids, tenant_id=tenant.id).order_by("created_at"))
    return {
        "tenant": tenant.slug, "contact": email.strip(), "exported_at": timezone.now().isoformat(),
        "escalations": [{
            "follow_up_url": followup_url(tenant_slug=tenant.slug, public_id=e.public_id),
            "question": e.question, "history": e.history, "status": e.status, "contact_email": e.contact_email,
            "created_at": e.created_at.isoformat(), "resolved_at": e.resolved_at.isoformat() if e.resolved_at else None,
            "messages": [{"author": m.author_kind, "body": m.body, "created_at": m.created_at.isoformat()}
                         for m in messages if m.escalation_id == e.pk],
        } for e in escalations],
        "questions": [{"question": t.question, "answer": t.answer, "action": t.action, "feedback": t.feedback,
                       "feedback_comment": t.feedback_comment, "created_at": t.created_at.isoformat()}
                      for t in traces],
    }


def report_dict(report: RetentionReport | ErasureReport) -> dict[str, Any]:
    return asdict(report)
