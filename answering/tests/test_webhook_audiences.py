"""Webhook deliveries and settings as a narrower member meets them (issue 45, item 1).

A delivery carries the audiences of the trace it quotes and the console filters it like that
trace; the secret is shown once when made and never rendered again; only a member holding every
audience of the tenant points the webhook (it receives every audience's events)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from answering.handoff.config import handoff_config, handoff_settings_save
from answering.models import WebhookDelivery
from answering.tests.console_data import CONSOLE_PERMISSIONS, escalation_make, staff_client
from tenants import actions
from tenants.rls import tenant_context

pytestmark = pytest.mark.django_db
IMMEDIATE = override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}},
                              WEBHOOK_ALLOW_PRIVATE_TARGETS=True)
SETTINGS_PERMISSIONS = (*CONSOLE_PERMISSIONS, "add_handoffsettings", "change_handoffsettings",
                        "view_handoffsettings", "view_webhookdelivery")
SECRET = "whsec_never-on-a-page"


def _deliveries(tenant_id: int) -> dict[str, WebhookDelivery]:
    with tenant_context(tenant_id):
        return {d.payload["data"]["escalation"]["question"]: d for d in WebhookDelivery.objects.filter(
            tenant_id=tenant_id, event="escalation.created")}


@IMMEDIATE
def test_a_delivery_is_shown_only_to_members_holding_its_audiences(acme: Any,
                                                                   django_capture_on_commit_callbacks: Any) -> None:
    # A port nobody listens on: the delivery fails and stays on record, which is all this reads.
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="digest", overdue_hours=24, retention_days=90,
                          webhook_url="http://127.0.0.1:9/hook", webhook_secret=SECRET)
    with django_capture_on_commit_callbacks(execute=True):
        escalation_make(acme.tenant, "What is the partner discount code PARTNER-77?", audiences=["internal"])
        escalation_make(acme.tenant, "Where is my parcel?", audiences=["public"])
    rows = _deliveries(acme.tenant.id)
    internal, public = rows["What is the partner discount code PARTNER-77?"], rows["Where is my parcel?"]
    assert internal.audiences == ["internal"] and public.audiences == ["public"]

    agent = staff_client(acme.agent, *SETTINGS_PERMISSIONS)  # holds public and customer
    assert agent.get(f"/admin/answering/webhookdelivery/{internal.pk}/change/").status_code == 404
    listing = agent.get("/admin/answering/webhookdelivery/").content.decode()
    assert f"/{public.pk}/change/" in listing and f"/{internal.pk}/change/" not in listing
    assert "Where is my parcel?" in agent.get(f"/admin/answering/webhookdelivery/{public.pk}/change/").content.decode()
    owner = staff_client(acme.owner, *SETTINGS_PERMISSIONS)  # holds every audience
    assert "PARTNER-77" in owner.get(f"/admin/answering/webhookdelivery/{internal.pk}/change/").content.decode()


def test_a_delivery_without_audiences_is_refused_by_the_database(acme: Any) -> None:
    from django.db import IntegrityError, transaction

    with tenant_context(acme.tenant.id), pytest.raises(IntegrityError), transaction.atomic():
        WebhookDelivery.objects.create(tenant_id=acme.tenant.id, event="escalation.created", url="http://x/",
                                       payload={}, audiences=None)


def test_the_secret_is_shown_once_and_never_rendered_again(acme: Any, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    owner = staff_client(acme.owner, *SETTINGS_PERMISSIONS)
    shown = owner.post("/admin/answering/handoffsettings/add/", {
        "tenant": acme.tenant.pk, "notify_mode": "each", "overdue_hours": 24, "retention_days": 90,
        "webhook_url": "http://127.0.0.1:9/hook"})
    secret = handoff_config(tenant_id=acme.tenant.id).webhook_secret
    assert secret.startswith("whsec_") and secret in shown.content.decode()
    assert "no-store" in shown["Cache-Control"]
    for user in (acme.owner, acme.agent):
        client = staff_client(user, *SETTINGS_PERMISSIONS)
        page = client.get(f"/admin/answering/handoffsettings/{acme.tenant.pk}/change/").content.decode()
        assert "set (hidden" in page and secret not in page and "whsec_" not in page
    # Saving other fields keeps the secret, unseen; asking for a new one shows only the new one.
    kept = owner.post(f"/admin/answering/handoffsettings/{acme.tenant.pk}/change/", {
        "notify_mode": "digest", "overdue_hours": 12, "retention_days": 90, "webhook_url": "http://127.0.0.1:9/hook"})
    assert kept.status_code == 302 and handoff_config(tenant_id=acme.tenant.id).webhook_secret == secret
    rotated = owner.post(f"/admin/answering/handoffsettings/{acme.tenant.pk}/change/", {
        "notify_mode": "digest", "overdue_hours": 12, "retention_days": 90, "webhook_url": "http://127.0.0.1:9/hook",
        "rotate_webhook_secret": "on"}).content.decode()
    new = handoff_config(tenant_id=acme.tenant.id).webhook_secret
    assert new != secret and new in rotated and secret not in rotated


def test_only_a_member_holding_every_audience_points_the_webhook(acme: Any, settings: Any,
                                                                  django_user_model: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    narrow_admin = django_user_model.objects.create(username="acme-public-admin", is_staff=True)
    actions.membership_grant(tenant=acme.tenant, user=narrow_admin, role="owner", audience_slugs=["public"])
    client = staff_client(narrow_admin, *SETTINGS_PERMISSIONS)
    refused = client.post("/admin/answering/handoffsettings/add/", {
        "tenant": acme.tenant.pk, "notify_mode": "each", "overdue_hours": 24, "retention_days": 90,
        "webhook_url": "http://127.0.0.1:9/theirs"})
    assert refused.status_code == 200 and "every audience" in refused.content.decode()
    assert handoff_config(tenant_id=acme.tenant.id).webhook_url == ""
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="each", overdue_hours=24, retention_days=90,
                          webhook_url="http://127.0.0.1:9/ours", webhook_secret=SECRET)
    url = f"/admin/answering/handoffsettings/{acme.tenant.pk}/change/"
    page = client.get(url).content.decode()
    assert 'name="webhook_url"' not in page and 'name="rotate_webhook_secret"' not in page
    for attempt in ({"webhook_url": "http://127.0.0.1:9/theirs"}, {"rotate_webhook_secret": "on"}):
        client.post(url, {"notify_mode": "digest", "overdue_hours": 6, "retention_days": 90, **attempt})
        stored = handoff_config(tenant_id=acme.tenant.id)
        assert stored.webhook_url == "http://127.0.0.1:9/ours" and stored.webhook_secret == SECRET
    # The rest of the settings are theirs to change.
    assert client.post(url, {"notify_mode": "digest", "overdue_hours": 6, "retention_days": 90}).status_code == 302
    assert handoff_config(tenant_id=acme.tenant.id).overdue_hours == 6
