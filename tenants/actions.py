"""Writes to tenancy tables: named, keyword-only, typed. Views and commands call these."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from tenants.models import ApiKey, ApiKeyAudience, Audience, Membership, MembershipAudience, Tenant

DEFAULT_AUDIENCES = (("public", "Public"), ("customer", "Customers"), ("internal", "Internal staff"))
_KEY_PREFIX_BYTES = 6


@transaction.atomic
def tenant_create(*, slug: str, name: str, text_search_config: str = "english", language: str = "en") -> Tenant:
    """Create a tenant with the default audiences public, customer and internal."""
    tenant = Tenant.objects.create(slug=slug, name=name, text_search_config=text_search_config, language=language)
    for audience_slug, audience_name in DEFAULT_AUDIENCES:
        Audience.objects.create(tenant=tenant, slug=audience_slug, name=audience_name)
    return tenant


def tenant_get_or_create(*, slug: str, name: str | None = None) -> tuple[Tenant, bool]:
    existing = Tenant.objects.filter(slug=slug).first()
    if existing is not None:
        return existing, False
    return tenant_create(slug=slug, name=name or slug.replace("-", " ").title()), True


def audience_ids(*, tenant: Tenant, slugs: Sequence[str]) -> tuple[int, ...]:
    """Resolve audience slugs of one tenant, failing loudly on an unknown one."""
    found = dict(Audience.objects.filter(tenant=tenant, slug__in=list(slugs)).values_list("slug", "id"))
    missing = sorted(set(slugs) - set(found))
    if missing:
        raise ValueError(f"tenant {tenant.slug} has no audience {', '.join(missing)}")
    return tuple(sorted(found.values()))


@transaction.atomic
def membership_grant(
    *, tenant: Tenant, user: User, role: str, audience_slugs: Sequence[str]
) -> Membership:
    membership, _ = Membership.objects.update_or_create(tenant=tenant, user=user, defaults={"role": role})
    MembershipAudience.objects.filter(membership=membership).delete()
    for audience_id in audience_ids(tenant=tenant, slugs=audience_slugs):
        MembershipAudience.objects.create(tenant=tenant, membership=membership, audience_id=audience_id)
    return membership


def hash_api_key(raw_key: str) -> str:
    # Keys are 256-bit random tokens, so a fast hash is enough: there is nothing to brute-force.
    return hashlib.sha256(raw_key.encode()).hexdigest()


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    raw_key: str  # shown once, never stored


@transaction.atomic
def api_key_create(*, tenant: Tenant, name: str, audience_slugs: Sequence[str] = ("public",),
                   rate_limit_per_minute: int | None = None) -> IssuedKey:
    prefix = "ad_" + secrets.token_hex(_KEY_PREFIX_BYTES)
    raw_key = f"{prefix}.{secrets.token_urlsafe(32)}"
    api_key = ApiKey.objects.create(tenant=tenant, name=name, prefix=prefix, key_hash=hash_api_key(raw_key),
                                    rate_limit_per_minute=rate_limit_per_minute)
    for audience_id in audience_ids(tenant=tenant, slugs=audience_slugs):
        ApiKeyAudience.objects.create(tenant=tenant, api_key=api_key, audience_id=audience_id)
    return IssuedKey(api_key=api_key, raw_key=raw_key)


def api_key_revoke(*, api_key: ApiKey) -> None:
    ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
