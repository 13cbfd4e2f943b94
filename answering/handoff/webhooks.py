"""The tenant's outgoing webhook: signed JSON events, delivered by a background task with
retries and exponential backoff, every attempt logged on the delivery row (docs/decisions/0045).

Signature: `X-Answerdesk-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>." + body)>` with
the Unix timestamp in `X-Answerdesk-Timestamp`; a receiver recomputes it over the raw body and
refuses old timestamps (README, "Receiving webhooks").
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks import default_task_backend, task

from answering.handoff.config import handoff_config
from answering.handoff.targets import UnsafeTarget, target_check
from answering.models import WebhookDelivery
from tenants.rls import tenant_context

log = logging.getLogger(__name__)
EVENTS = ("escalation.created", "escalation.message", "escalation.resolved", "feedback.created")
MAX_LOGGED_ERROR_CHARS = 300


def sign(*, secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), str(int(timestamp)).encode() + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


def webhook_enqueue(*, tenant_id: int, event: str, data: dict[str, Any], audiences: list[str],
                    escalation_id: int | None = None, trace_id: int | None = None) -> int | None:
    """Record an event for the tenant's webhook and queue its delivery; None without a webhook.

    `audiences` are those of the trace the event quotes: the console shows the delivery only to
    members holding them all."""
    if event not in EVENTS:
        raise ValueError(f"unknown webhook event {event!r}")
    if not audiences:
        raise ValueError("a webhook event needs the audiences of the trace it quotes")
    config = handoff_config(tenant_id=tenant_id)
    if not config.webhook_url:
        return None
    payload = {"event": event, "created_at": timezone.now().isoformat(), "data": data}
    with tenant_context(tenant_id):
        delivery = WebhookDelivery.objects.create(tenant_id=tenant_id, escalation_id=escalation_id,
                                                  trace_id=trace_id, event=event, url=config.webhook_url,
                                                  payload=payload, audiences=sorted(set(audiences)))
        transaction.on_commit(lambda: _schedule(tenant_id=tenant_id, delivery_id=delivery.pk, when=None),
                              robust=True)
    return delivery.pk


def _schedule(*, tenant_id: int, delivery_id: int, when: dt.datetime | None) -> None:
    if when is not None and not default_task_backend.supports_defer:
        return  # a backend without run_after: housekeeping_run picks due deliveries up
    chosen = webhook_deliver_task.using(run_after=when) if when is not None else webhook_deliver_task
    chosen.enqueue(tenant_id=tenant_id, delivery_id=delivery_id)


@task()
def webhook_deliver_task(tenant_id: int, delivery_id: int) -> str:
    outcome = webhook_attempt(tenant_id=tenant_id, delivery_id=delivery_id)
    if outcome.retry_at is not None:
        _schedule(tenant_id=tenant_id, delivery_id=delivery_id, when=outcome.retry_at)
    return outcome.status


@dataclass(frozen=True)
class Attempt:
    status: str  # delivered | pending (will retry) | failed (gave up) | skipped (nothing to send)
    status_code: int | None = None
    error: str = ""
    retry_at: dt.datetime | None = None


def backoff_seconds(attempt_number: int) -> int:
    """Wait after the n-th failed attempt: base, 2 × base, 4 × base, …"""
    return settings.WEBHOOK_BACKOFF_SECONDS * 2 ** (attempt_number - 1)


def _host_header(url: str) -> str:
    return httpx.URL(url).netloc.decode("ascii")


def pinned_target(url: str, addresses: list[str]) -> tuple[str, dict[str, Any]]:
    """`url` with its host replaced by the first checked address; TLS still verifies the name (SNI)."""
    parsed = httpx.URL(url)
    extensions: dict[str, Any] = {"sni_hostname": parsed.host} if parsed.scheme == "https" else {}
    return str(parsed.copy_with(host=addresses[0].split("%")[0])), extensions


def _post(url: str, *, secret: str, delivery: WebhookDelivery) -> tuple[int | None, str]:
    body = json.dumps({"id": delivery.pk, **delivery.payload}, ensure_ascii=False, separators=(",", ":")).encode()
    timestamp = int(time.time())
    headers = {"Content-Type": "application/json", "User-Agent": "Answerdesk-Webhook/1",
               "X-Answerdesk-Event": delivery.event, "X-Answerdesk-Delivery": str(delivery.pk),
               "X-Answerdesk-Timestamp": str(timestamp),
               "X-Answerdesk-Signature": sign(secret=secret, timestamp=timestamp, body=body)}
    try:
        # Checked again now (the name may point elsewhere than when it was saved), and the
        # request goes to the address checked, so a second lookup cannot swap it (rebinding).
        pinned, extensions = pinned_target(url, target_check(url))
        with httpx.Client(timeout=settings.WEBHOOK_TIMEOUT_SECONDS, follow_redirects=False) as client:
            response = client.post(pinned, content=body, headers={**headers, "Host": _host_header(url)},
                                   extensions=extensions)
    except UnsafeTarget as exc:
        return None, f"refused: {exc}"
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if 200 <= response.status_code < 300:
        return response.status_code, ""
    return response.status_code, f"HTTP {response.status_code}"


def webhook_attempt(*, tenant_id: int, delivery_id: int) -> Attempt:
    """One delivery attempt, logged on the row whatever happens; says when to retry, if ever."""
    with tenant_context(tenant_id):
        delivery = WebhookDelivery.objects.filter(pk=delivery_id, tenant_id=tenant_id,
                                                  status=WebhookDelivery.Status.PENDING).first()
    if delivery is None:
        return Attempt("skipped")
    config = handoff_config(tenant_id=tenant_id)
    started = time.perf_counter()
    code, error = _post(delivery.url, secret=config.webhook_secret, delivery=delivery)
    number = delivery.attempt_count + 1
    now = timezone.now()
    entry = {"number": number, "at": now.isoformat(), "status_code": code, "error": error[:MAX_LOGGED_ERROR_CHARS],
             "ms": round((time.perf_counter() - started) * 1000, 1)}
    if not error:
        outcome = Attempt(WebhookDelivery.Status.DELIVERED, code)
    elif error.startswith("refused") or number >= settings.WEBHOOK_MAX_ATTEMPTS:
        outcome = Attempt(WebhookDelivery.Status.FAILED, code, error)
    else:
        outcome = Attempt(WebhookDelivery.Status.PENDING, code, error,
                          retry_at=now + dt.timedelta(seconds=backoff_seconds(number)))
    entry["retry_at"] = outcome.retry_at.isoformat() if outcome.retry_at else None
    with tenant_context(tenant_id):
        WebhookDelivery.objects.filter(pk=delivery_id, tenant_id=tenant_id).update(
            status=outcome.status, attempt_count=number, attempts=[*delivery.attempts, entry],
            next_attempt_at=outcome.retry_at, delivered_at=now if not error else None)
    return outcome


def webhook_redeliver(*, tenant_id: int, delivery_id: int) -> None:
    """Send a delivery again from the admin (failed or delivered alike); the attempt log stays."""
    with tenant_context(tenant_id):
        WebhookDelivery.objects.filter(pk=delivery_id, tenant_id=tenant_id).update(
            status=WebhookDelivery.Status.PENDING, attempt_count=0, next_attempt_at=None, delivered_at=None)
        transaction.on_commit(lambda: _schedule(tenant_id=tenant_id, delivery_id=delivery_id, when=None), robust=True)


def webhook_due_deliveries(*, tenant_id: int, now: dt.datetime | None = None) -> int:
    """Queue the tenant's pending deliveries whose retry time has come (for backends without run_after)."""
    now = now or timezone.now()
    with tenant_context(tenant_id):
        due = list(WebhookDelivery.objects.filter(tenant_id=tenant_id, status=WebhookDelivery.Status.PENDING,
                                                  next_attempt_at__lte=now).values_list("pk", flat=True))
    for delivery_id in due:
        webhook_deliver_task.enqueue(tenant_id=tenant_id, delivery_id=delivery_id)
    return len(due)
