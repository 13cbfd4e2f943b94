"""Absolute links for emails and webhooks: PUBLIC_BASE_URL plus the path Django routes."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse


def followup_path(*, tenant_slug: str, public_id: str) -> str:
    return reverse("chat:followup", kwargs={"tenant_slug": tenant_slug, "public_id": public_id})


def followup_url(*, tenant_slug: str, public_id: str) -> str:
    return settings.PUBLIC_BASE_URL.rstrip("/") + followup_path(tenant_slug=tenant_slug, public_id=public_id)


def console_url(*, escalation_id: int) -> str:
    return settings.PUBLIC_BASE_URL.rstrip("/") + reverse("admin:answering_escalation_change", args=[escalation_id])


def follow_up_object(*, tenant_slug: str, public_id: str) -> dict[str, str] | None:
    """What the API returns on an abstention: the opaque id and the page's URL (None otherwise)."""
    if not public_id:
        return None
    return {"id": public_id, "url": followup_url(tenant_slug=tenant_slug, public_id=public_id)}
