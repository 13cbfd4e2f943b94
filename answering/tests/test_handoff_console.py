"""The console's side of the handoff: the reply form, another tenant's escalation is a 404,
queue hygiene (oldest first, age, overdue), reply and resolve times on the dashboard,
erasure from the list (tenant admins only), handoff settings refusing private webhook URLs."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from answering.console.reply_times import reply_times
from answering.handoff import followups
from answering.handoff.config import handoff_config
from answering.models import Escalation, EscalationMessage
from answering.tests.console_data import CONSOLE_PERMISSIONS, escalation_make, staff_client
from tenants.rls import tenant_context

pytestmark = pytest.mark.django_db


def test_the_reply_form_posts_into_the_thread_and_another_tenants_escalation_is_404(acme: Any, globex: Any) -> None:
    mine = escalation_make(acme.tenant, "Where is my parcel?")
    agent = staff_client(acme.agent)
    page = agent.get(f"/admin/answering/escalation/{mine.pk}/change/").content.decode()
    assert 'id="reply-form"' in page and "asker" in page and f"/t/acme/f/{mine.public_id}/" in page
    assert agent.post(f"/admin/answering/escalation/{mine.pk}/reply/", {"body": "On its way."}).status_code == 302
    stranger = staff_client(globex.agent)
    assert stranger.post(f"/admin/answering/escalation/{mine.pk}/reply/", {"body": "hijack"}).status_code == 404
    with tenant_context(acme.tenant.id):
        assert list(EscalationMessage.objects.filter(escalation_id=mine.pk).values_list("body", flat=True)) == [
            "On its way."]


def test_the_queue_is_oldest_first_with_age_and_an_overdue_flag(acme: Any) -> None:
    old = escalation_make(acme.tenant, "An old question")
    new = escalation_make(acme.tenant, "A new question")
    with tenant_context(acme.tenant.id):
        Escalation.objects.filter(pk=old.pk).update(created_at=timezone.now() - dt.timedelta(hours=30))
    listing = staff_client(acme.agent).get("/admin/answering/escalation/").content.decode()
    assert listing.index("An old question") < listing.index("A new question")
    assert "30 h" in listing
    assert listing.count('alt="True"') == 1  # only the 30-hour-old one is past the 24 default
    assert handoff_config(tenant_id=acme.tenant.id).overdue_hours == 24
    followups.asker_message_add(tenant_id=acme.tenant.id, public_id=new.public_id, body="Any news?")
    listing = staff_client(acme.agent).get("/admin/answering/escalation/").content.decode()
    assert listing.count('alt="True"') == 2  # overdue, and the asker wrote last on the new one


def test_reply_and_resolve_times_are_percentiles_per_day(acme: Any) -> None:
    now = timezone.now().replace(hour=1)
    made = [escalation_make(acme.tenant, f"q{n}") for n in range(3)]
    with tenant_context(acme.tenant.id):
        for hours, escalation in zip((1, 2, 3), made):
            Escalation.objects.filter(pk=escalation.pk).update(
                created_at=now, first_reply_at=now + dt.timedelta(hours=hours),
                resolved_at=now + dt.timedelta(hours=2 * hours), status="resolved")
    [today] = reply_times(tenant_ids=[acme.tenant.id], audiences=None, days=1, until=now.date())
    assert today.reply_p50_hours == pytest.approx(2.0) and today.reply_p90_hours == pytest.approx(2.8)
    assert today.resolve_p50_hours == pytest.approx(4.0)
    # An agent without the internal audience does not see an internal question's numbers.
    hidden = escalation_make(acme.tenant, "internal", audiences=["internal"])
    with tenant_context(acme.tenant.id):
        Escalation.objects.filter(pk=hidden.pk).update(created_at=now, first_reply_at=now + dt.timedelta(hours=50))
    [seen] = reply_times(tenant_ids=[acme.tenant.id], audiences={acme.tenant.id: ["public", "customer"]}, days=1,
                         until=now.date())
    assert seen.reply_p90_hours == pytest.approx(2.8)
    page = staff_client(acme.agent).get("/admin/answering/trace/dashboard/?days=7").content.decode()
    assert "Time to first reply (hours)" in page and 'id="reply-times"' in page


def test_erasing_from_the_list_is_for_tenant_admins(acme: Any) -> None:
    mine = escalation_make(acme.tenant, "Where is my parcel?")
    agent = staff_client(acme.agent)
    agent.post("/admin/answering/escalation/", {"action": "erase_asker", "_selected_action": [mine.pk]})
    with tenant_context(acme.tenant.id):
        assert Escalation.objects.filter(pk=mine.pk).exists()
    owner = staff_client(acme.owner)
    owner.post("/admin/answering/escalation/", {"action": "erase_asker", "_selected_action": [mine.pk]})
    with tenant_context(acme.tenant.id):
        assert not Escalation.objects.filter(pk=mine.pk).exists()


def test_handoff_settings_refuse_a_private_webhook_url(acme: Any, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    owner = staff_client(acme.owner, *CONSOLE_PERMISSIONS, "add_handoffsettings", "change_handoffsettings",
                         "view_handoffsettings")
    response = owner.post("/admin/answering/handoffsettings/add/", {
        "tenant": acme.tenant.pk, "notify_mode": "each", "overdue_hours": 24, "retention_days": 90,
        "webhook_url": "http://169.254.169.254/latest", "webhook_secret": ""})
    assert response.status_code == 200 and "link-local" in response.content.decode()
    assert handoff_config(tenant_id=acme.tenant.id).webhook_url == ""
    response = owner.post("/admin/answering/handoffsettings/add/", {
        "tenant": acme.tenant.pk, "notify_mode": "digest", "overdue_hours": 6, "retention_days": 30,
        "webhook_url": "", "webhook_secret": ""})
    assert response.status_code == 302
    assert handoff_config(tenant_id=acme.tenant.id).overdue_hours == 6
