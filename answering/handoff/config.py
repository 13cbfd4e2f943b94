"""A tenant's handoff settings: notification mode, overdue hours, retention days, webhook.

A tenant without a row has the defaults; the admin writes a row through handoff_settings_save.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.translation import gettext_lazy

from answering.handoff.targets import target_check
from answering.models import HandoffSettings
from tenants.rls import tenant_context

# Backends that keep mail on this machine (printed, in memory, in files, dropped): nothing reaches an asker.
MAIL_KEPT_LOCALLY = frozenset({
    "django.core.mail.backends.console.EmailBackend", "django.core.mail.backends.locmem.EmailBackend",
    "django.core.mail.backends.filebased.EmailBackend", "django.core.mail.backends.dummy.EmailBackend"})
# Shown to staff on the escalation page, in the console's language (a lazy string: read when shown).
NO_MAIL_SERVER_TEXT = gettext_lazy("not sent: no mail server (the mail went to the server log); set EMAIL_HOST and "
                                   "restart to email askers (docs/handoff.md, Email)")
DEFAULT_AGENT_DISPLAY_NAME = "Support team"
MAX_AGENT_DISPLAY_NAME = 80
DEFAULT_OVERDUE_HOURS = 24
DEFAULT_RETENTION_DAYS = 90


@dataclass(frozen=True)
class HandoffConfig:
    notify_mode: str = HandoffSettings.NotifyMode.EACH
    overdue_hours: int = DEFAULT_OVERDUE_HOURS
    retention_days: int = DEFAULT_RETENTION_DAYS
    webhook_url: str = ""
    webhook_secret: str = ""
    agent_display_name: str = DEFAULT_AGENT_DISPLAY_NAME


def handoff_config(*, tenant_id: int) -> HandoffConfig:
    with tenant_context(tenant_id):
        row = HandoffSettings.objects.filter(tenant_id=tenant_id).first()
    if row is None:
        return HandoffConfig()
    return HandoffConfig(notify_mode=row.notify_mode, overdue_hours=row.overdue_hours,
                         retention_days=row.retention_days, webhook_url=row.webhook_url,
                         webhook_secret=row.webhook_secret, agent_display_name=row.agent_display_name)


def mail_sends() -> bool:
    """True when the configured email backend sends mail out (SMTP or another that leaves the machine)."""
    return str(settings.EMAIL_BACKEND) not in MAIL_KEPT_LOCALLY


def new_webhook_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def handoff_settings_save(*, tenant_id: int, notify_mode: str, overdue_hours: int, retention_days: int,
                          webhook_url: str, webhook_secret: str,
                          agent_display_name: str = DEFAULT_AGENT_DISPLAY_NAME) -> HandoffConfig:
    """Validate and store a tenant's settings. A webhook URL must pass the target check now
    (and again at each delivery); a URL without a secret gets a generated one."""
    if notify_mode not in HandoffSettings.NotifyMode.values:
        raise ValueError(f"notify mode must be one of {', '.join(HandoffSettings.NotifyMode.values)}")
    if overdue_hours < 1 or retention_days < 1:
        raise ValueError("overdue hours and retention days must be at least 1")
    # Left empty, askers see the default: never nothing, never an agent's user name.
    agent_display_name = " ".join((agent_display_name or "").split()) or DEFAULT_AGENT_DISPLAY_NAME
    if len(agent_display_name) > MAX_AGENT_DISPLAY_NAME:
        raise ValueError(f"the agents' display name may be at most {MAX_AGENT_DISPLAY_NAME} characters")
    webhook_url = webhook_url.strip()
    if webhook_url:
        target_check(webhook_url)
        webhook_secret = webhook_secret.strip() or new_webhook_secret()
    values: dict[str, Any] = {"notify_mode": notify_mode, "overdue_hours": overdue_hours, "retention_days": retention_days,
              "webhook_url": webhook_url, "webhook_secret": webhook_secret.strip(),
              "agent_display_name": agent_display_name}
    with tenant_context(tenant_id):
        HandoffSettings.objects.update_or_create(tenant_id=tenant_id, defaults=values)
    return HandoffConfig(**values)
