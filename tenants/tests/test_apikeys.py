"""Key authentication: prefix lookup, constant-time hash compare, revocation, audiences from the row."""

from __future__ import annotations

import hmac
from typing import Any

import pytest

from conftest import Cast
from tenants import actions, apikeys
from tenants.apikeys import api_key_authenticate
from tenants.models import ApiKey


@pytest.mark.django_db
def test_a_valid_key_yields_its_tenant_and_audiences(acme: Cast) -> None:
    issued = actions.api_key_create(tenant=acme.tenant, name="bot", audience_slugs=["public", "customer"])
    principal = api_key_authenticate(raw_key=issued.raw_key)
    assert principal is not None
    assert principal.tenant == acme.tenant and principal.audiences == ("customer", "public")
    assert principal.prefix == issued.api_key.prefix


@pytest.mark.django_db
def test_only_the_hash_is_stored(acme: Cast) -> None:
    issued = actions.api_key_create(tenant=acme.tenant, name="bot")
    row = ApiKey.objects.get(pk=issued.api_key.pk)
    assert issued.raw_key not in (row.key_hash, row.prefix) and row.key_hash == actions.hash_api_key(issued.raw_key)


@pytest.mark.django_db
def test_unknown_malformed_tampered_and_revoked_keys_are_all_none(acme: Cast, globex: Cast) -> None:
    issued = actions.api_key_create(tenant=acme.tenant, name="bot")
    other = actions.api_key_create(tenant=globex.tenant, name="bot")
    prefix, _, secret = issued.raw_key.partition(".")
    _, _, other_secret = other.raw_key.partition(".")
    for raw in ("", "nodot", "ad_ffffffffffff.whatever", f"{prefix}.{secret}x", f"{prefix}.{other_secret}",
                f"{prefix}." + "a" * 300, f"{prefix}"):
        assert api_key_authenticate(raw_key=raw) is None, raw
    actions.api_key_revoke(api_key=issued.api_key)
    assert api_key_authenticate(raw_key=issued.raw_key) is None
    assert api_key_authenticate(raw_key=other.raw_key) is not None


@pytest.mark.django_db
def test_the_hash_is_compared_in_constant_time(acme: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(apikeys.hmac, "compare_digest", spy)
    issued = actions.api_key_create(tenant=acme.tenant, name="bot")
    assert api_key_authenticate(raw_key=issued.raw_key) is not None
    assert api_key_authenticate(raw_key="ad_ffffffffffff.unknown") is None  # a miss compares too
    assert len(calls) == 2


@pytest.mark.django_db
def test_last_used_at_is_written_at_most_once_a_minute(acme: Cast) -> None:
    issued = actions.api_key_create(tenant=acme.tenant, name="bot")
    api_key_authenticate(raw_key=issued.raw_key)
    first = ApiKey.objects.get(pk=issued.api_key.pk).last_used_at
    assert first is not None
    api_key_authenticate(raw_key=issued.raw_key)
    assert ApiKey.objects.get(pk=issued.api_key.pk).last_used_at == first


@pytest.mark.django_db
def test_a_key_limit_of_zero_is_unlimited(acme: Cast, settings: Any) -> None:
    settings.API_RATE_LIMIT_PER_KEY = 1
    issued = actions.api_key_create(tenant=acme.tenant, name="bot")
    ApiKey.objects.filter(pk=issued.api_key.pk).update(rate_limit_per_minute=0)
    principal = api_key_authenticate(raw_key=issued.raw_key)
    assert principal is not None
    assert all(apikeys.key_rate_limit(principal=principal).allowed for _ in range(5))
