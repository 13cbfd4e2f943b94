"""The loop of issue 18, end to end with real transports: an abstention with a contact → the
agents' email (real SMTP on loopback) and a signed `escalation.created` webhook (real HTTP
receiver) → the agent's reply in the admin → the asker's email and follow-up page show it →
the same question is answered from the ticket → erasing the person leaves no trace of them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test import Client, override_settings

from answering.handoff.config import handoff_settings_save
from answering.handoff.retention import erase_contact
from answering.models import Escalation
from answering.tests.console_data import staff_client
from answering.tests.handoff_servers import Mailbox, Receiver, smtp_server, webhook_receiver  # noqa: F401
from answering.tests.test_handoff_webhooks import readme_verify
from tenants import actions
from tenants.models import Tenant
from tenants.rls import rls_transaction, staff_tenant_context, tenant_context

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("uploads_in_tmp")]
IMMEDIATE = override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}})
QUESTION = "Can I pay my invoice with a Zorblat gift card?"
REPLY = ("Yes. Zorblat gift cards are accepted for invoices under 500 euros: enter the gift card code "
         "on the invoice payment page and the balance is applied at once.")
ASKER = "ann.asker@example.com"
SECRET = "whsec_test-secret"


def ask(client: Client, key: str, **body: Any) -> dict[str, Any]:
    response = client.post("/api/v1/ask", data=json.dumps({"question": QUESTION, **body}),
                           content_type="application/json", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200, response.content[:300]
    return dict(response.json())


def events_of(receiver: Receiver) -> list[str]:
    return [r.headers["X-Answerdesk-Event"] for r in receiver.requests]


def rows_mentioning(text: str, tenant_ids: list[int], tenant_id: int) -> dict[str, int]:
    """Every table of the schema, each row read as JSON text: where does `text` still occur?"""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
        tables = [name for (name,) in cursor.fetchall()]
    found = {}
    with staff_tenant_context(tenant_ids), rls_transaction(tenant_id=tenant_id, all_audiences=True) as cursor:
        for table in tables:
            # Identifiers from the catalog, quoted by PostgreSQL's own quote_ident.
            cursor.execute("SELECT quote_ident(%s)", [table])
            (quoted,) = cursor.fetchone()
            cursor.execute(f"SELECT count(*) FROM {quoted} AS t WHERE row_to_json(t)::text ILIKE %s",  # noqa: S608
                           [f"%{text}%"])
            (count,) = cursor.fetchone()
            if count:
                found[table] = int(count)
    return found


def _abstain_with_contact(acme: Any, client: Client, key: str, smtp_server: Mailbox, webhook_receiver: Receiver,
                          capture: Any) -> tuple[dict[str, Any], Escalation]:
    with capture(execute=True):
        first = ask(client, key, contact=ASKER, conversation_id="ann-1")
    assert first["action"] == "escalated"
    follow_up = first["follow_up"]
    assert follow_up["url"].endswith(f"/t/acme/f/{follow_up['id']}/") and len(follow_up["id"]) >= 22
    with tenant_context(acme.tenant.id):
        escalation = Escalation.objects.get(public_id=follow_up["id"])
    assert escalation.contact_email == ASKER and str(escalation.pk) != follow_up["id"]
    [alert] = smtp_server.to("agent@acme.test")
    assert QUESTION in alert.get_payload() and f"/admin/answering/escalation/{escalation.pk}/change/" in alert.get_payload()
    assert smtp_server.to("outsider@acme.test") == []  # not a member of acme
    assert events_of(webhook_receiver) == ["escalation.created"]
    created = webhook_receiver.requests[0]
    assert readme_verify(SECRET, created.headers, created.body)
    sent = json.loads(created.body)
    assert sent["data"]["escalation"]["follow_up_id"] == follow_up["id"]
    assert sent["data"]["escalation"]["contact_email"] == ASKER

    return follow_up, escalation


def _erase_and_check(acme: Any, escalation: Escalation, follow_up: dict[str, Any]) -> None:
    tenant_ids = list(Tenant.objects.values_list("id", flat=True))
    before = rows_mentioning(ASKER, tenant_ids, acme.tenant.id)
    assert {"answering_escalation", "answering_webhook_delivery"} <= set(before), before  # the scan sees them
    assert "cachelayer_entry" in rows_mentioning(QUESTION, tenant_ids, acme.tenant.id)
    report = erase_contact(tenant=acme.tenant, email=ASKER.upper())
    assert report.escalations == 1 and report.traces == 2 and report.messages == 1
    assert report.deliveries == 3 and report.tickets == [f"ESC-{escalation.pk}"] and report.cache_entries == 1
    assert rows_mentioning(ASKER, tenant_ids, acme.tenant.id) == {}
    left = rows_mentioning(QUESTION, tenant_ids, acme.tenant.id)
    assert set(left) <= {"corpus_document", "corpus_chunk"}, left  # the published ticket, named in the report
    assert Client().get(f"/t/acme/f/{follow_up['id']}/").status_code == 404


@IMMEDIATE
def test_the_handoff_loop_closes_with_real_smtp_and_webhooks(
        acme: Any, globex: Any, smtp_server: Mailbox, webhook_receiver: Receiver,  # noqa: F811
        django_capture_on_commit_callbacks: Any) -> None:
    acme.agent.email, acme.outsider.email = "agent@acme.test", "outsider@acme.test"
    acme.agent.save(), acme.outsider.save()
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="each", overdue_hours=24, retention_days=90,
                          webhook_url=webhook_receiver.url, webhook_secret=SECRET)
    key = actions.api_key_create(tenant=acme.tenant, name="site", audience_slugs=["public"]).raw_key
    client = Client()

    # 1. An abstention with a contact: the follow-up object, the agents' email, the signed webhook.
    follow_up, escalation = _abstain_with_contact(acme, client, key, smtp_server, webhook_receiver,
                                                  django_capture_on_commit_callbacks)

    # 2. The agent replies in the admin and resolves; the owner publishes the drafted article.
    agent = staff_client(acme.agent)
    with django_capture_on_commit_callbacks(execute=True):
        response = agent.post(f"/admin/answering/escalation/{escalation.pk}/reply/",
                              {"body": REPLY, "resolve": "on", "to_document": "on"})
    assert response.status_code == 302
    with tenant_context(acme.tenant.id):
        escalation = Escalation.objects.get(pk=escalation.pk)
    assert escalation.status == "resolved" and escalation.resolution_note == REPLY
    assert escalation.first_reply_at is not None and escalation.article_audience == "internal"
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client(acme.owner).post(
            f"/admin/answering/escalation/{escalation.pk}/article/",
            {"question": escalation.article_question, "answer": escalation.article_answer, "audience": "public",
             "action": "publish"})
    assert response.status_code == 302
    with tenant_context(acme.tenant.id):
        escalation = Escalation.objects.get(pk=escalation.pk)
    assert escalation.knowledge_job_id
    [reply_mail] = smtp_server.to(ASKER)
    assert REPLY in reply_mail.get_payload() and follow_up["url"] in reply_mail.get_payload()
    assert events_of(webhook_receiver) == ["escalation.created", "escalation.message", "escalation.resolved"]
    assert all(readme_verify(SECRET, r.headers, r.body) for r in webhook_receiver.requests)

    # 3. The follow-up page shows the reply; another tenant's page does not know the id.
    page = Client().get(f"/t/acme/f/{follow_up['id']}/")
    assert page.status_code == 200 and REPLY in page.content.decode() and "answered" in page.content.decode()
    assert Client().get(f"/t/globex/f/{follow_up['id']}/").status_code == 404

    # 4. The same question, asked again, is answered from the ticket.
    with django_capture_on_commit_callbacks(execute=True):
        again = ask(client, key, conversation_id="ann-1")
    assert again["action"] == "answered" and again["follow_up"] is None
    assert [s["slug"] for s in again["sources"]] == [f"ESC-{escalation.pk}"]

    # 5. Erasure: the person's email and questions are gone from every table, but the ticket.
    _erase_and_check(acme, escalation, follow_up)
