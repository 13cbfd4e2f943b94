"""API key authentication: who is calling, for which tenant, reading which audiences.

The tenant and the audiences come from the key row, never from a request body. A key is
`<prefix>.<secret>`; the prefix finds the row (it is unique and indexed), the SHA-256 of the
whole key is compared in constant time, revoked keys are refused like unknown ones.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone

from tenants.actions import hash_api_key
from tenants.models import ApiKey, Audience, Tenant
from tenants.ratelimit import RateDecision, rate_limit

MAX_KEY_CHARS = 200
# last_used_at is for humans deciding which keys to revoke; minute precision is plenty, and
# it saves a write on every request.
_LAST_USED_RESOLUTION = timedelta(minutes=1)
# Compared against when the prefix is unknown, so a miss costs the same hash and compare as a hit.
_DUMMY_HASH = hash_api_key("ad_000000000000.dummy")


@dataclass(frozen=True)
class KeyPrincipal:
    api_key: ApiKey
    tenant: Tenant
    audiences: tuple[str, ...]

    @property
    def prefix(self) -> str:
        return self.api_key.prefix


def request_principal(request: HttpRequest) -> KeyPrincipal:
    """The key an endpoint's authentication (config/api.py) found: django-ninja sets it as
    `request.auth` per request, an attribute HttpRequest's type does not declare."""
    principal = getattr(request, "auth", None)
    if not isinstance(principal, KeyPrincipal):
        raise TypeError(f"{request.path} ran without API key authentication")
    return principal


def api_key_authenticate(*, raw_key: str) -> KeyPrincipal | None:
    """The key's principal, or None for an unknown, malformed or revoked key (one answer for all)."""
    if not raw_key or len(raw_key) > MAX_KEY_CHARS:
        return None
    prefix, dot, _ = raw_key.partition(".")
    api_key = (ApiKey.objects.select_related("tenant").filter(prefix=prefix).first()
               if dot and len(prefix) <= 16 else None)
    presented = hash_api_key(raw_key)
    matches = hmac.compare_digest(presented, api_key.key_hash if api_key is not None else _DUMMY_HASH)
    if api_key is None or not matches or api_key.revoked_at is not None:
        return None
    _touch(api_key)
    audiences = tuple(sorted(
        Audience.objects.filter(tenant_id=api_key.tenant_id, apikeyaudience__api_key=api_key)
        .values_list("slug", flat=True)
    ))
    return KeyPrincipal(api_key=api_key, tenant=api_key.tenant, audiences=audiences)


def _touch(api_key: ApiKey) -> None:
    now = timezone.now()
    ApiKey.objects.filter(pk=api_key.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - _LAST_USED_RESOLUTION)
    ).update(last_used_at=now)


def key_rate_limit(*, principal: KeyPrincipal) -> RateDecision:
    """The key's own per-minute limit if it has one, else API_RATE_LIMIT_PER_KEY; 0 is unlimited."""
    own = principal.api_key.rate_limit_per_minute
    limit = int(own) if own is not None else int(settings.API_RATE_LIMIT_PER_KEY)
    return rate_limit(bucket=f"api-key:{principal.prefix}", limit=limit, window_seconds=60)


def address_rate_limit(*, address: str) -> RateDecision:
    return rate_limit(bucket=f"api-addr:{address}", limit=int(settings.API_RATE_LIMIT_PER_ADDRESS),
                      window_seconds=60)
