"""Webhooks: the README's receiver snippet accepts our signature and refuses a forged one;
a failing receiver is retried with exponential backoff and every attempt shows in the admin;
private targets are refused when saved and at delivery."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings

from answering.handoff import targets, webhooks
from answering.handoff.config import handoff_settings_save
from answering.models import WebhookDelivery
from answering.tests.console_data import escalation_make, staff_client
from answering.tests.handoff_servers import Receiver, webhook_receiver  # noqa: F401
from tenants.rls import tenant_context

IMMEDIATE = override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}})
SECRET = "whsec_receiver-test"
README = Path(settings.BASE_DIR) / "README.md"


def readme_verify(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """Run the receiver snippet exactly as the README prints it."""
    text = README.read_text(encoding="utf-8")
    snippet = re.search(r"<!-- webhook-receiver-snippet -->\n```python\n(.*?)```", text, re.S)
    assert snippet, "the README lost its receiver snippet"
    namespace: dict[str, Any] = {}
    exec(compile(snippet.group(1), "README.md", "exec"), namespace)  # noqa: S102 - our own README
    return bool(namespace["verify"](secret, headers, body))


def signed(body: bytes, *, secret: str = SECRET, timestamp: int | None = None) -> dict[str, str]:
    stamp = int(time.time()) if timestamp is None else timestamp
    return {"X-Answerdesk-Timestamp": str(stamp),
            "X-Answerdesk-Signature": webhooks.sign(secret=secret, timestamp=stamp, body=body)}


def test_the_readme_snippet_accepts_our_signature_and_refuses_forgeries() -> None:
    body = b'{"event":"escalation.created","data":{}}'
    assert readme_verify(SECRET, signed(body), body)
    assert not readme_verify(SECRET, signed(body, secret="whsec_someone-else"), body)  # forged
    assert not readme_verify(SECRET, signed(body), body.replace(b"created", b"resolved"))  # tampered
    assert not readme_verify(SECRET, signed(body, timestamp=int(time.time()) - 3600), body)  # replayed
    assert not readme_verify(SECRET, {}, body)


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "http://localhost/x", "http://10.1.2.3/",
                                 "http://169.254.169.254/latest/meta-data", "http://[::1]/", "http://192.168.0.7/",
                                 "http://[::ffff:127.0.0.1]/", "ftp://example.com/", "http://user:pw@8.8.8.8/"])
def test_private_loopback_and_link_local_targets_are_refused(url: str, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    with pytest.raises(targets.UnsafeTarget):
        targets.target_check(url)


def test_a_public_address_passes(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    assert targets.target_check("https://8.8.8.8/hook") == ["8.8.8.8"]


@pytest.mark.django_db
def test_saving_a_private_webhook_url_is_refused(acme: Any, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    with pytest.raises(targets.UnsafeTarget):
        handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="each", overdue_hours=24, retention_days=90,
                              webhook_url="http://127.0.0.1:8080/hook", webhook_secret="")


@pytest.mark.django_db
@IMMEDIATE
def test_a_failing_receiver_is_retried_with_backoff_and_every_attempt_shows_in_the_admin(
        acme: Any, webhook_receiver: Receiver, django_capture_on_commit_callbacks: Any) -> None:  # noqa: F811
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="digest", overdue_hours=24, retention_days=90,
                          webhook_url=webhook_receiver.url, webhook_secret=SECRET)
    webhook_receiver.statuses = [500, 503]
    with django_capture_on_commit_callbacks(execute=True):
        escalation = escalation_make(acme.tenant, "Where is my parcel?")
    with tenant_context(acme.tenant.id):
        delivery = WebhookDelivery.objects.get(escalation_id=escalation.pk)
    assert delivery.status == "pending" and delivery.attempt_count == 1  # the task's first attempt failed
    assert delivery.next_attempt_at is not None
    first_wait = delivery.next_attempt_at - dt.datetime.fromisoformat(delivery.attempts[0]["at"])
    assert first_wait == dt.timedelta(seconds=settings.WEBHOOK_BACKOFF_SECONDS)

    second = webhooks.webhook_attempt(tenant_id=acme.tenant.id, delivery_id=delivery.pk)
    assert second.status == "pending" and second.status_code == 503
    with tenant_context(acme.tenant.id):
        delivery = WebhookDelivery.objects.get(pk=delivery.pk)
    assert delivery.next_attempt_at is not None
    second_wait = delivery.next_attempt_at - dt.datetime.fromisoformat(delivery.attempts[1]["at"])
    assert second_wait == 2 * first_wait  # exponential

    assert webhooks.webhook_attempt(tenant_id=acme.tenant.id, delivery_id=delivery.pk).status == "delivered"
    with tenant_context(acme.tenant.id):
        delivery = WebhookDelivery.objects.get(pk=delivery.pk)
    assert [a["status_code"] for a in delivery.attempts] == [500, 503, 200] and delivery.delivered_at
    assert len(webhook_receiver.requests) == 3
    ids = {json.loads(r.body)["id"] for r in webhook_receiver.requests}
    assert ids == {delivery.pk}  # one event, three tries: a receiver can deduplicate by id

    owner = staff_client(acme.owner, "view_webhookdelivery")
    page = owner.get(f"/admin/answering/webhookdelivery/{delivery.pk}/change/").content.decode()
    assert "HTTP 500" in page and "HTTP 503" in page and page.count("<tr><td>") == 3
    with django_capture_on_commit_callbacks(execute=True):
        owner.post("/admin/answering/webhookdelivery/", {"action": "redeliver", "_selected_action": [delivery.pk]})
    assert len(webhook_receiver.requests) == 4


@pytest.mark.django_db
@IMMEDIATE
def test_a_receiver_that_keeps_failing_is_given_up_after_the_last_attempt(
        acme: Any, webhook_receiver: Receiver, settings: Any,  # noqa: F811
        django_capture_on_commit_callbacks: Any) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="digest", overdue_hours=24, retention_days=90,
                          webhook_url=webhook_receiver.url, webhook_secret=SECRET)
    webhook_receiver.statuses = [500] * 5
    with django_capture_on_commit_callbacks(execute=True):
        escalation = escalation_make(acme.tenant, "Where is my parcel?")
    with tenant_context(acme.tenant.id):
        delivery = WebhookDelivery.objects.get(escalation_id=escalation.pk)
    last = webhooks.webhook_attempt(tenant_id=acme.tenant.id, delivery_id=delivery.pk)
    assert last.status == "failed" and last.retry_at is None


@pytest.mark.django_db
@IMMEDIATE
def test_a_target_that_turns_private_is_refused_at_delivery(
        acme: Any, webhook_receiver: Receiver, settings: Any,  # noqa: F811
        django_capture_on_commit_callbacks: Any) -> None:
    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="digest", overdue_hours=24, retention_days=90,
                          webhook_url=webhook_receiver.url, webhook_secret=SECRET)
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False  # as if the saved name now resolved inside the network
    with django_capture_on_commit_callbacks(execute=True):
        escalation = escalation_make(acme.tenant, "Where is my parcel?")
    with tenant_context(acme.tenant.id):
        delivery = WebhookDelivery.objects.get(escalation_id=escalation.pk)
    assert delivery.status == "failed" and delivery.attempts[0]["error"].startswith("refused")
    assert webhook_receiver.requests == []


@pytest.mark.django_db
def test_without_a_webhook_nothing_is_recorded_and_the_answer_path_does_not_wait(
        acme: Any, django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        escalation = escalation_make(acme.tenant, "Where is my parcel?")
    assert callbacks  # the work happens after the commit, never inside the answer's transaction
    with tenant_context(acme.tenant.id):
        assert not WebhookDelivery.objects.filter(escalation_id=escalation.pk).exists()


def test_a_delivery_goes_to_the_checked_address_with_the_name_kept_for_tls() -> None:
    url, extensions = webhooks.pinned_target("https://hooks.example.com:8443/in?x=1", ["93.184.216.34"])
    assert url == "https://93.184.216.34:8443/in?x=1" and extensions == {"sni_hostname": "hooks.example.com"}
    assert webhooks.pinned_target("http://h.example/x", ["2001:db8::1"])[0] == "http://[2001:db8::1]/x"


@pytest.mark.django_db
@IMMEDIATE
def test_a_vote_is_a_signed_feedback_created_event(acme: Any, webhook_receiver: Receiver,  # noqa: F811
                                                   django_capture_on_commit_callbacks: Any) -> None:
    from answering.pipeline.records import feedback_record

    handoff_settings_save(tenant_id=acme.tenant.id, notify_mode="digest", overdue_hours=24, retention_days=90,
                          webhook_url=webhook_receiver.url, webhook_secret=SECRET)
    with django_capture_on_commit_callbacks(execute=True):
        escalation = escalation_make(acme.tenant, "Where is my parcel?")
    with django_capture_on_commit_callbacks(execute=True):
        assert feedback_record(tenant=acme.tenant, audiences=["public"], trace_id=escalation.trace_id, vote=-1,
                               comment="nobody answered")
    [created, voted] = webhook_receiver.requests
    assert voted.headers["X-Answerdesk-Event"] == "feedback.created" and readme_verify(SECRET, voted.headers,
                                                                                        voted.body)
    body = json.loads(voted.body)["data"]["feedback"]
    assert body == {**body, "trace_id": escalation.trace_id, "vote": -1, "comment": "nobody answered"}
