"""Retention: older personal data is anonymised or deleted by the housekeeping round while the
dashboard's numbers survive; the digest tells agents of each escalation once; export."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core import mail
from django.core.management import call_command
from django.utils import timezone

from answering.console import articles, escalations
from answering.console.dashboard import daily_metrics
from answering.handoff import followups
from answering.handoff.config import handoff_settings_save
from answering.handoff.housekeeping import housekeeping_run
from answering.handoff.retention import export_contact
from answering.models import Escalation, EscalationMessage, Trace
from answering.tests.console_data import escalation_make
from tenants.rls import tenant_context

pytestmark = pytest.mark.django_db


def age(tenant_id: int, escalation: Escalation, days: int) -> None:
    then = timezone.now() - dt.timedelta(days=days)
    with tenant_context(tenant_id):
        Trace.objects.filter(pk=escalation.trace_id).update(created_at=then)
        Escalation.objects.filter(pk=escalation.pk).update(created_at=then)
        EscalationMessage.objects.filter(escalation_id=escalation.pk).update(created_at=then)


def test_retention_anonymises_old_rows_and_the_dashboard_keeps_its_numbers(acme: Any) -> None:
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="each", overdue_hours=24, retention_days=30,
                          webhook_url="", webhook_secret="")
    old = escalation_make(acme.tenant, "My card number is 4111 and my parcel is late")
    followups.followup_contact_set(tenant_id=acme.tenant.id, public_id=old.public_id, email="old@example.com")
    replied = escalations.escalation_reply(escalation=old, user=acme.agent, body="Sorry, sent again.", resolve=True)
    articles.article_draft_start(escalation=replied, user=acme.owner)  # an unpublished draft from their words
    recent = escalation_make(acme.tenant, "Where is my other parcel?")
    age(acme.tenant.id, old, 40)
    day = (timezone.now() - dt.timedelta(days=40)).date()
    before = daily_metrics(tenant_ids=[acme.tenant.id], audiences=None, days=45)

    [report] = [r for r in housekeeping_run() if r["retention"]["tenant"] == "acme"]
    assert report["retention"]["traces"] == 1 and report["retention"]["escalations"] == 1
    assert report["retention"]["messages"] == 1
    with tenant_context(acme.tenant.id):
        gone = Escalation.objects.select_related("trace").get(pk=old.pk)
        kept = Escalation.objects.get(pk=recent.pk)
        assert not EscalationMessage.objects.filter(escalation_id=old.pk).exists()
    assert (gone.question, gone.contact_email, gone.history, gone.trace.question) == ("", "", [], "")
    assert (gone.article_question, gone.article_answer, gone.article_audience) == ("", "", "")
    assert gone.first_reply_at is not None and gone.trace.action == "escalated"  # the numbers stay
    assert kept.question == "Where is my other parcel?"
    after = daily_metrics(tenant_ids=[acme.tenant.id], audiences=None, days=45)
    assert [d for d in after.days if d.day == day] == [d for d in before.days if d.day == day]
    assert after.total == before.total
    assert housekeeping_run()[0]["retention"]["traces"] == 0  # idempotent


def test_the_digest_lists_each_waiting_escalation_once(acme: Any) -> None:
    acme.agent.email = "agent@acme.test"
    acme.agent.save()
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="digest", overdue_hours=24, retention_days=90,
                          webhook_url="", webhook_secret="")
    escalation_make(acme.tenant, "Where is my parcel?")
    escalation_make(acme.tenant, "Can I change my address?")
    housekeeping_run()
    [digest] = mail.outbox
    assert digest.to == ["agent@acme.test"] and "2 question(s)" in digest.subject
    assert "Where is my parcel?" in digest.body and "Can I change my address?" in digest.body
    housekeeping_run()
    assert len(mail.outbox) == 1


def test_export_writes_the_persons_questions_and_thread(acme: Any, tmp_path: Any) -> None:
    mine = escalation_make(acme.tenant, "Where is my parcel?")
    followups.followup_contact_set(tenant_id=acme.tenant.id, public_id=mine.public_id, email="Bo@Example.com")
    followups.asker_message_add(tenant_id=acme.tenant.id, public_id=mine.public_id, body="It was due Monday.")
    escalation_make(acme.tenant, "Someone else's question")
    data = export_contact(tenant=acme.tenant, email="bo@example.com")
    assert [e["question"] for e in data["escalations"]] == ["Where is my parcel?"]
    assert data["escalations"][0]["messages"][0]["body"] == "It was due Monday."
    assert [q["question"] for q in data["questions"]] == ["Where is my parcel?"]
    out = tmp_path / "bo.json"
    call_command("export", tenant="acme", contact="bo@example.com", output=str(out))
    assert "It was due Monday." in out.read_text()


def test_the_housekeeping_command_runs_a_round_and_says_when_it_cannot_schedule(acme: Any, capsys: Any,
                                                                                 settings: Any) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    call_command("handoff_housekeeping")
    assert '"tenant": "acme"' in capsys.readouterr().out
    call_command("handoff_housekeeping", "--schedule")
    assert "cron" in capsys.readouterr().out  # the immediate backend cannot run a task later
