"""Follow-ups: the asker's page behind an opaque id, and the escalation's thread (docs/decisions/0044).

The public id is 16 random bytes (secrets.token_urlsafe), looked up only together with the
tenant of the page it is asked on: another tenant's id, an unknown id and a malformed one all
read as nothing, so the page cannot be used to enumerate. Messages are plain text, in order.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.utils import timezone

from answering.handoff import events
from answering.handoff.config import handoff_config
from answering.models import Escalation, EscalationMessage
from tenants.rls import tenant_context

PUBLIC_ID = re.compile(r"^[A-Za-z0-9_-]{20,32}$")
MAX_MESSAGE_CHARS = 4000


class FollowUpUnknown(LookupError):
    """No follow-up with this id on this tenant (never issued, another tenant's, or erased)."""


class ContactInvalid(ValueError):
    pass


def new_public_id() -> str:
    return secrets.token_urlsafe(16)


def contact_checked(email: str) -> str:
    """A contact email as stored: trimmed, validated, at most 254 characters; '' for none."""
    email = (email or "").strip()
    if not email:
        return ""
    try:
        validate_email(email)
    except ValidationError as exc:
        raise ContactInvalid("that does not look like an email address") from exc
    if len(email) > 254:
        raise ContactInvalid("that email address is too long")
    return email


def contact_given(email: str | None) -> str:
    """An API's optional contact: absent is none, but a contact given must be an address."""
    if email is None:
        return ""
    if not email.strip():
        raise ContactInvalid("an empty contact; leave the field out for none")
    return contact_checked(email)


@dataclass(frozen=True)
class ThreadMessage:
    kind: str  # asker | agent
    body: str
    created_at: dt.datetime
    author: str = ""

    @classmethod
    def of(cls, message: EscalationMessage, *, agent_name: str | None = None) -> ThreadMessage:
        """`agent_name`: what the asker sees on every agent reply (the tenant's display name);
        None for the console, which names the agent who wrote it."""
        author = ""
        if message.author_kind == EscalationMessage.Kind.AGENT:
            if agent_name is not None:
                author = agent_name
            else:
                author = (message.author.get_full_name() or message.author.get_username()) if message.author \
                    else "Support"
        return cls(kind=message.author_kind, body=message.body, created_at=message.created_at, author=author)


@dataclass(frozen=True)
class FollowUp:
    public_id: str
    question: str
    status: str
    created_at: dt.datetime
    has_contact: bool
    messages: list[ThreadMessage] = field(default_factory=list)

    @property
    def agent_replies(self) -> int:
        return sum(1 for m in self.messages if m.kind == EscalationMessage.Kind.AGENT)


def _escalation(tenant_id: int, public_id: str) -> Escalation:
    """Inside a tenant context. Index: answering_escalation_public_idx (tenant_id, public_id)."""
    if not PUBLIC_ID.match(public_id or ""):
        raise FollowUpUnknown(public_id)
    found = Escalation.objects.filter(tenant_id=tenant_id, public_id=public_id).first()
    if found is None:
        raise FollowUpUnknown(public_id)
    return found


def thread(*, tenant_id: int, escalation_id: int, agent_name: str | None = None) -> list[ThreadMessage]:
    """The thread in order; with `agent_name` (the asker's view) every agent reply is signed with it."""
    with tenant_context(tenant_id):
        # Index: answering_escalation_message_thread_idx (tenant_id, escalation_id, created_at).
        rows = (EscalationMessage.objects.filter(tenant_id=tenant_id, escalation_id=escalation_id)
                .select_related("author").order_by("created_at", "id"))
        return [ThreadMessage.of(m, agent_name=agent_name) for m in rows]


def followup_read(*, tenant_id: int, public_id: str) -> FollowUp:
    with tenant_context(tenant_id):
        escalation = _escalation(tenant_id, public_id)
    return FollowUp(public_id=escalation.public_id, question=escalation.question, status=escalation.status,
                    created_at=escalation.created_at, has_contact=bool(escalation.contact_email),
                    # The asker sees the tenant's display name, never an agent's user name.
                    messages=thread(tenant_id=tenant_id, escalation_id=escalation.pk,
                                    agent_name=handoff_config(tenant_id=tenant_id).agent_display_name))


def message_add(*, escalation: Escalation, kind: str, body: str, author_id: int | None = None) -> EscalationMessage:
    """Append to a thread; the webhook hears of it after the commit."""
    body = (body or "").strip()
    if not body:
        raise ValueError("a message needs some text")
    if len(body) > MAX_MESSAGE_CHARS and kind == EscalationMessage.Kind.ASKER:
        raise ValueError(f"a message may be at most {MAX_MESSAGE_CHARS} characters")
    with tenant_context(escalation.tenant_id):
        message = EscalationMessage.objects.create(tenant_id=escalation.tenant_id, escalation_id=escalation.pk,
                                                   author_kind=kind, author_id=author_id, body=body)
        if kind == EscalationMessage.Kind.AGENT:
            # The first agent reply stamps the escalation once: time to first reply on the dashboard.
            Escalation.objects.filter(pk=escalation.pk, tenant_id=escalation.tenant_id,
                                      first_reply_at__isnull=True).update(first_reply_at=timezone.now())
        events.escalation_message(escalation=escalation, message=message)
    return message


def asker_message_add(*, tenant_id: int, public_id: str, body: str) -> ThreadMessage:
    """The asker writes on their follow-up page. A resolved follow-up still takes messages:
    the asker may need to say the answer did not help, and agents see it in the thread."""
    with tenant_context(tenant_id):
        escalation = _escalation(tenant_id, public_id)
    return ThreadMessage.of(message_add(escalation=escalation, kind=EscalationMessage.Kind.ASKER, body=body))


def followup_contact_set(*, tenant_id: int, public_id: str, email: str) -> None:
    """The asker leaves (or corrects) an email on the abstention or on the follow-up page."""
    email = contact_checked(email)
    if not email:
        raise ContactInvalid("please enter an email address")
    with tenant_context(tenant_id):
        escalation = _escalation(tenant_id, public_id)
        Escalation.objects.filter(pk=escalation.pk, tenant_id=tenant_id).update(contact_email=email)
