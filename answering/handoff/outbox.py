"""Where each notification email stands, kept on the row it is about, and when to try it again.

Two channels: the agents' alert of a new escalation (columns `alert_*` of the escalation) and
the email of an agent's reply to the asker (`email_*` of the message). An attempt first claims
its row (pending, due, not claimed by another attempt), so a retry the worker runs at its
`run_after` and the same retry found due by the housekeeping round never both send. A failure
waits NOTIFY_BACKOFF_SECONDS × 2^(n-1) and is given up after NOTIFY_MAX_ATTEMPTS.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from answering.models import Escalation, EscalationMessage, NotificationStatus
from tenants.rls import tenant_context

MAX_ERROR_CHARS = 300
# A claimed attempt holds its row this long: past SMTP's own timeout, so only a worker that
# died mid-send lets another attempt in.
CLAIM_SECONDS = 600


@dataclass(frozen=True)
class Channel:
    """One kind of notification: the rows that carry its state, under which column prefix."""

    label: str
    model: type[Escalation] | type[EscalationMessage]
    prefix: str

    def column(self, name: str) -> str:
        return f"{self.prefix}_{name}"


AGENT_ALERT = Channel("agent alert", Escalation, "alert")
ASKER_REPLY = Channel("reply email", EscalationMessage, "email")


@dataclass(frozen=True)
class Outcome:
    status: str
    retry_at: dt.datetime | None = None


def backoff_seconds(attempt_number: int) -> int:
    return int(settings.NOTIFY_BACKOFF_SECONDS) * 2 ** (attempt_number - 1)


def outbox_queue(*, channel: Channel, tenant_id: int, row_id: int) -> None:
    """A notification is wanted: pending and due now, so the housekeeping round sends it even
    if its task was never queued or never ran."""
    with tenant_context(tenant_id):
        channel.model.objects.filter(pk=row_id, tenant_id=tenant_id).update(**{
            channel.column("status"): NotificationStatus.PENDING, channel.column("attempts"): 0,
            channel.column("error"): "", channel.column("next_at"): timezone.now()})


def outbox_claim(*, channel: Channel, tenant_id: int, row_id: int, now: dt.datetime) -> bool:
    """True if this attempt may send: the row is pending and due, and is now held for it."""
    next_at = channel.column("next_at")
    with tenant_context(tenant_id):
        return bool(channel.model.objects.filter(pk=row_id, tenant_id=tenant_id, **{
            channel.column("status"): NotificationStatus.PENDING, f"{next_at}__lte": now,
        }).update(**{next_at: now + dt.timedelta(seconds=CLAIM_SECONDS)}))


def outbox_record(*, channel: Channel, tenant_id: int, row_id: int, sent: bool | None, error: str,
                  now: dt.datetime) -> Outcome:
    """Write what a claimed attempt did: `sent` False is nobody to send to, None is a failure (`error`)."""
    with tenant_context(tenant_id):
        rows = channel.model.objects.filter(pk=row_id, tenant_id=tenant_id)
        number = int(rows.values_list(channel.column("attempts"), flat=True).first() or 0) + 1
        if sent is not None:
            outcome = Outcome(NotificationStatus.SENT if sent else NotificationStatus.SKIPPED)
        elif number >= settings.NOTIFY_MAX_ATTEMPTS:
            outcome = Outcome(NotificationStatus.FAILED)
        else:
            outcome = Outcome(NotificationStatus.PENDING, now + dt.timedelta(seconds=backoff_seconds(number)))
        rows.update(**{channel.column("status"): outcome.status, channel.column("attempts"): F(
            channel.column("attempts")) + 1, channel.column("error"): error[:MAX_ERROR_CHARS],
            channel.column("next_at"): outcome.retry_at})
    return outcome


def outbox_due(*, channel: Channel, tenant_id: int, now: dt.datetime | None = None) -> list[int]:
    """The tenant's pending notifications of this channel whose retry time has come."""
    next_at = channel.column("next_at")
    with tenant_context(tenant_id):
        # Index: answering_escalation_alert_due_idx / answering_escalation_message_email_due_idx (partial, pending).
        return list(channel.model.objects.filter(tenant_id=tenant_id, **{
            channel.column("status"): NotificationStatus.PENDING, f"{next_at}__lte": now or timezone.now(),
        }).values_list("pk", flat=True))


def outbox_line(*, channel: Channel, status: str, attempts: int, error: str,
                next_at: dt.datetime | None) -> str:
    """What the console says of one notification, e.g. `agent alert: failed after 3 tries, last error: …`."""
    tries = f"{attempts} {'try' if attempts == 1 else 'tries'}"
    match status:
        case NotificationStatus.SENT:
            text = "sent" if attempts <= 1 else f"sent after {tries}"
        case NotificationStatus.SKIPPED:
            text = "not sent, nobody to send it to"
        case NotificationStatus.FAILED:
            text = f"failed after {tries}, last error: {error}"
        case NotificationStatus.PENDING if attempts:
            when = next_at.isoformat(timespec="seconds") if next_at else "soon"
            text = f"retrying after {tries} (next at {when}), last error: {error}"
        case NotificationStatus.PENDING:
            text = "queued"
        case _:
            text = "none"
    return f"{channel.label}: {text}"
