"""Notifications with a real SMTP server on loopback: a multi-line question reaches the agent
and the asker with one-line subjects; with the server down a notification is retried with
backoff, and the escalation's console page says how it went (issue 45, item 5)."""

from __future__ import annotations

import datetime as dt
import json
import re
from email.header import decode_header, make_header
from email.message import Message
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from django.test import Client, override_settings
from django.utils import timezone

from answering.handoff.config import handoff_settings_save
from answering.handoff.housekeeping import housekeeping_run
from answering.handoff.notify import one_line
from answering.models import Escalation, EscalationMessage
from answering.tests.console_data import escalation_make, staff_client
from answering.tests.handoff_servers import Mailbox, free_port, smtp_server  # noqa: F401
from tenants import actions
from tenants.rls import tenant_context

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("uploads_in_tmp")]
IMMEDIATE = override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}})
QUESTION = "line one\nline two: can I pay with a Zorblat gift card?"
ASKER = "ann.asker@example.com"


def subject(message: Message) -> str:
    """The Subject as the reader sees it: unfolded (RFC 5322 wraps a long header on the wire) and decoded."""
    return str(make_header(decode_header(re.sub(r"\r?\n(?=[ \t])", "", str(message["Subject"])))))


def escalate(acme: Any, capture: Any, question: str = QUESTION) -> Escalation:
    acme.agent.email = "agent@acme.test"
    acme.agent.save()
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="each", overdue_hours=24, retention_days=90,
                          webhook_url="", webhook_secret="")
    key = actions.api_key_create(tenant=acme.tenant, name="site", audience_slugs=["public"]).raw_key
    with capture(execute=True):
        response = Client().post("/api/v1/ask", data=json.dumps({"question": question, "contact": ASKER}),
                                 content_type="application/json", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200 and response.json()["action"] == "escalated", response.content[:300]
    with tenant_context(acme.tenant.id):
        return Escalation.objects.get(pk=response.json()["escalation_id"])


def smtp_down(settings: Any) -> int:
    """Mail goes to a loopback port nobody listens on (connection refused), until a server starts there."""
    port = free_port()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    return port


def backoff_passes(acme: Any) -> None:
    """Every pending notification of acme is due now, as if its wait had passed."""
    past = timezone.now() - dt.timedelta(seconds=1)
    with tenant_context(acme.tenant.id):
        Escalation.objects.filter(tenant_id=acme.tenant.id, alert_status="pending").update(alert_next_at=past)
        EscalationMessage.objects.filter(tenant_id=acme.tenant.id, email_status="pending").update(email_next_at=past)


def console_text(acme: Any, escalation: Escalation) -> str:
    page = staff_client(acme.agent).get(f"/admin/answering/escalation/{escalation.pk}/change/")
    assert page.status_code == 200
    return page.content.decode()


def test_one_line_folds_every_line_break_and_bounds_the_length() -> None:
    assert one_line("a\nb\r\nc\u2028d\x85e\tf\x00g", limit=100) == "a b c d e f g"
    long = one_line("word " * 100, limit=40)
    assert len(long) == 40 and long.endswith("…") and "\n" not in long


@IMMEDIATE
def test_a_multi_line_question_reaches_the_agent_and_the_askers_reply(
        acme: Any, smtp_server: Mailbox, django_capture_on_commit_callbacks: Any) -> None:  # noqa: F811
    escalation = escalate(acme, django_capture_on_commit_callbacks)
    [alert] = smtp_server.to("agent@acme.test")
    assert "\n" not in subject(alert) and "line one line two" in subject(alert)
    assert QUESTION.replace("\n", "\r\n") in alert.get_payload()  # the body keeps both lines (CRLF on the wire)
    with django_capture_on_commit_callbacks(execute=True):
        reply = staff_client(acme.agent).post(f"/admin/answering/escalation/{escalation.pk}/reply/",
                                              {"body": "Yes, under 500 euros."})
    assert reply.status_code == 302
    [answer] = smtp_server.to(ASKER)
    assert subject(answer).startswith("Re: line one line two") and "Yes, under 500 euros." in answer.get_payload()
    page = console_text(acme, escalation)
    assert "agent alert: sent" in page and "reply email: sent" in page


@IMMEDIATE
def test_with_smtp_down_the_alert_is_retried_with_backoff_and_arrives_once_it_is_up(
        acme: Any, settings: Any, django_capture_on_commit_callbacks: Any) -> None:
    port = smtp_down(settings)
    escalation = escalate(acme, django_capture_on_commit_callbacks)
    with tenant_context(acme.tenant.id):
        waiting = Escalation.objects.get(pk=escalation.pk)
    assert (waiting.alert_status, waiting.alert_attempts) == ("pending", 1)
    assert waiting.alert_next_at is not None
    assert "ConnectionRefusedError" in waiting.alert_error and waiting.alert_next_at > timezone.now()
    assert "agent alert: retrying after 1 try" in console_text(acme, escalation)
    housekeeping_run()  # not due yet: the backoff holds it
    with tenant_context(acme.tenant.id):
        assert Escalation.objects.get(pk=escalation.pk).alert_attempts == 1

    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        backoff_passes(acme)
        housekeeping_run()
    finally:
        controller.stop()
    [alert] = mailbox.to("agent@acme.test")
    assert "line one line two" in subject(alert)
    with tenant_context(acme.tenant.id):
        sent = Escalation.objects.get(pk=escalation.pk)
    assert (sent.alert_status, sent.alert_attempts, sent.agents_notified_at is not None) == ("sent", 2, True)
    assert "agent alert: sent after 2 tries" in console_text(acme, escalation)


@IMMEDIATE
def test_a_notification_that_keeps_failing_gives_up_and_the_console_shows_why(
        acme: Any, settings: Any, django_capture_on_commit_callbacks: Any) -> None:
    settings.NOTIFY_MAX_ATTEMPTS = 2
    smtp_down(settings)
    escalation = escalate(acme, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        staff_client(acme.agent).post(f"/admin/answering/escalation/{escalation.pk}/reply/", {"body": "Yes."})
    backoff_passes(acme)
    housekeeping_run()
    backoff_passes(acme)
    housekeeping_run()  # nothing left to retry: both gave up after two tries
    with tenant_context(acme.tenant.id):
        failed = Escalation.objects.get(pk=escalation.pk)
        message = EscalationMessage.objects.get(escalation_id=escalation.pk)
    assert (failed.alert_status, failed.alert_attempts, failed.agents_notified_at) == ("failed", 2, None)
    assert (message.email_status, message.email_attempts) == ("failed", 2)
    page = console_text(acme, escalation)
    assert "agent alert: failed after 2 tries, last error: ConnectionRefusedError" in page
    assert "reply email: failed after 2 tries, last error: ConnectionRefusedError" in page


def test_a_failed_digest_is_sent_at_the_next_round_and_stops_no_other_tenant(
        acme: Any, globex: Any, settings: Any) -> None:
    acme.agent.email = "agent@acme.test"
    acme.agent.save()
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="digest", overdue_hours=24, retention_days=90,
                          webhook_url="", webhook_secret="")
    escalation_make(acme.tenant, "line one\nline two")
    port = smtp_down(settings)
    reports = housekeeping_run()
    assert {r["retention"]["tenant"] for r in reports} >= {"acme", "globex"}
    assert [r.get("digest") for r in reports if r["retention"]["tenant"] == "acme"] == [0]
    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        housekeeping_run()
    finally:
        controller.stop()
    [digest] = mailbox.to("agent@acme.test")
    assert "1 question(s)" in subject(digest) and "- line one line two" in digest.get_payload()
