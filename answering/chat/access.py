"""Who is asking: the tenant from the URL and the audiences the visitor may read."""

from __future__ import annotations

from typing import Any

from django.http import Http404

from tenants.models import Membership, Tenant

PUBLIC = "public"


def tenant_for_slug(slug: str) -> Tenant:
    """404 for an unknown tenant, with nothing in the body that says which tenants exist."""
    tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None:
        raise Http404("No such page.")
    return tenant


def chat_audiences(*, tenant: Tenant, user: Any) -> list[str]:
    """Anonymous visitors and signed-in non-members read the public audience; a member reads
    exactly the audiences of their membership in this tenant (never another tenant's)."""
    if user is None or not user.is_authenticated:
        return [PUBLIC]
    membership = Membership.objects.filter(tenant=tenant, user=user).first()
    if membership is None:
        return [PUBLIC]
    slugs = sorted(membership.audiences.filter(tenant=tenant).values_list("slug", flat=True))
    return slugs or [PUBLIC]


def member_email(*, tenant: Tenant, user: Any) -> str:
    """A signed-in member's account email: their escalations carry it without asking."""
    if user is None or not user.is_authenticated or not user.email:
        return ""
    return user.email if Membership.objects.filter(tenant=tenant, user=user).exists() else ""
