"""The console tells the truth (issue 48, item 4; docs/decisions/0105): "emailed" only when a
mail backend that sends is configured, else "not sent: no mail server" with how to set one;
askers see the tenant's agent display name (default "Support team"), never a user name; the
reply box comes before the scores; Documents has an Upload button and its audience filter says
"audience". The queue's fit at 1280 px is measured in a browser
(test_console_escalation_browser.py).

Forced fails seen red: mail_sends() returning True always, ThreadMessage.of ignoring the
display name, the work box moved back after the fieldsets, the Upload button's template block
removed, the plain "audience__slug" filter restored.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from answering.console import escalations
from answering.handoff.config import handoff_config, handoff_settings_save
from answering.models import Escalation, EscalationMessage, NotificationStatus
from answering.tests.console_data import CONSOLE_PERMISSIONS, escalation_make, staff_client
from tenants.rls import tenant_context

pytestmark = pytest.mark.django_db
URL = "/admin/answering/escalation/"
SMTP = "django.core.mail.backends.smtp.EmailBackend"
SETTINGS_PERMISSIONS = (*CONSOLE_PERMISSIONS, "add_handoffsettings", "change_handoffsettings", "view_handoffsettings")


def _with_contact(acme: Any, question: str = "Where is my parcel?") -> Escalation:
    escalation = escalation_make(acme.tenant, question)
    with tenant_context(acme.tenant.id):
        Escalation.objects.filter(pk=escalation.pk).update(contact_email="ann.lee@example.com")
        return Escalation.objects.select_related("tenant").get(pk=escalation.pk)


def _reply(acme: Any, escalation: Escalation, body: str) -> str:
    response = staff_client(acme.agent).post(f"{URL}{escalation.pk}/reply/", {"body": body}, follow=True)
    assert response.status_code == 200
    return str(response.content.decode())


def test_emailed_is_said_only_when_a_mail_backend_sends(acme: Any, settings: Any) -> None:
    # The test runner's backend keeps mail in memory, like the console backend prints it: nothing is sent.
    escalation = _with_contact(acme)
    page = _reply(acme, escalation, "It left the depot today.")
    assert "emailed to the asker" not in page
    assert "not sent: no mail server" in page and "set EMAIL_HOST" in page
    with tenant_context(acme.tenant.id):
        EscalationMessage.objects.filter(escalation_id=escalation.pk).update(email_status=NotificationStatus.SENT,
                                                                             email_attempts=1)
    change = staff_client(acme.agent).get(f"{URL}{escalation.pk}/change/").content.decode()
    assert "reply email: not sent: no mail server" in change and "reply email: sent" not in change
    assert f"emailed to {escalation.contact_email}" not in change

    settings.EMAIL_BACKEND = SMTP  # a backend that sends (the reply's own email waits for the commit)
    page = _reply(acme, escalation, "And the tracking link is on your follow-up page.")
    assert "emailed to the asker." in page and "no mail server" not in page
    change = staff_client(acme.agent).get(f"{URL}{escalation.pk}/change/").content.decode()
    assert "reply email: sent" in change and f"emailed to {escalation.contact_email}" in change


def test_askers_see_the_tenants_display_name_never_the_agents_user_name(acme: Any) -> None:
    escalation = _with_contact(acme)
    escalations.escalation_reply(escalation=escalation, user=acme.agent, body="It left the depot today.")
    page = Client().get(f"/t/acme/f/{escalation.public_id}/").content.decode()
    assert "It left the depot today." in page
    assert acme.agent.username not in page and "Support team" in page and "(support)" not in page
    assert handoff_config(tenant_id=acme.tenant.id).agent_display_name == "Support team"

    owner = staff_client(acme.owner, *SETTINGS_PERMISSIONS)
    response = owner.post("/admin/answering/handoffsettings/add/", {
        "tenant": acme.tenant.pk, "agent_display_name": "  Acme   help desk ", "notify_mode": "each",
        "overdue_hours": 24, "retention_days": 90, "webhook_url": ""})
    assert response.status_code == 302
    assert handoff_config(tenant_id=acme.tenant.id).agent_display_name == "Acme help desk"
    page = Client().get(f"/t/acme/f/{escalation.public_id}/").content.decode()
    assert "Acme help desk" in page and acme.agent.username not in page
    # Agents still see who wrote it, and what the asker was shown.
    console = staff_client(acme.agent).get(f"{URL}{escalation.pk}/change/").content.decode()
    assert f"{acme.agent.username} (the asker sees Acme help desk)" in console
    # Left empty, the default again: never nothing, never a user name.
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="each", overdue_hours=24, retention_days=90,
                          webhook_url="", webhook_secret="", agent_display_name=" ")
    assert handoff_config(tenant_id=acme.tenant.id).agent_display_name == "Support team"


def test_the_reply_box_comes_before_the_scores(acme: Any) -> None:
    escalation = escalation_make(acme.tenant, "Why was my invoice charged twice?")
    page = staff_client(acme.agent).get(f"{URL}{escalation.pk}/change/").content.decode()
    reply = page.index('id="id_reply_body"')
    for later in ("Why it escalated", "What retrieval found", 'id="id_note"'):
        assert reply < page.index(later), later


def test_documents_has_an_upload_button_and_filters_say_what_they_filter(acme: Any) -> None:
    owner = staff_client(acme.owner).get("/admin/corpus/document/").content.decode()
    assert 'href="/admin/corpus/ingestjob/add/"' in owner and "Upload documents" in owner
    assert "By slug" not in owner and "By audience" in owner
    # An agent uploads nothing (uploads are a tenant admin's): no button that leads to a refusal.
    agent = staff_client(acme.agent).get("/admin/corpus/document/").content.decode()
    assert "Upload documents" not in agent
