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


def _owner_client(cast: Cast) -> Any:
    from django.contrib.auth.models import Permission
    from django.test import Client

    cast.owner.user_permissions.set(Permission.objects.filter(
        codename__in=["add_apikey", "change_apikey", "view_apikey", "view_apikeyaudience", "add_apikeyaudience",
                      "change_apikeyaudience", "delete_apikeyaudience"]))
    client = Client()
    client.force_login(cast.owner)
    return client


@pytest.mark.django_db
def test_admin_creates_a_key_shown_once_with_its_audiences(acme: Cast) -> None:
    client = _owner_client(acme)
    response = client.post("/admin/tenants/apikey/add/", {
        "tenant": acme.tenant.pk, "name": "helpdesk bot", "audiences": [acme.public_id, acme.customer_id],
        "rate_limit_per_minute": "30"}, follow=True)
    assert response.status_code == 200
    row = ApiKey.objects.get(tenant=acme.tenant, name="helpdesk bot")
    page = response.content.decode()
    raw = next(word for word in page.replace("<", " ").split() if word.startswith(row.prefix + "."))
    principal = api_key_authenticate(raw_key=raw)
    assert principal is not None and principal.audiences == ("customer", "public")
    assert row.rate_limit_per_minute == 30
    # Shown once: the change page and the list show the prefix, never the key again.
    for url in (f"/admin/tenants/apikey/{row.pk}/change/", "/admin/tenants/apikey/"):
        later = client.get(url).content.decode()
        assert row.prefix in later and raw not in later


@pytest.mark.django_db
def test_admin_refuses_audiences_of_another_tenant(acme: Cast, globex: Cast) -> None:
    from django.contrib.auth.models import User

    root = User.objects.create_superuser("keyroot", password="pw")
    from django.test import Client

    client = Client()
    client.force_login(root)
    response = client.post("/admin/tenants/apikey/add/", {
        "tenant": acme.tenant.pk, "name": "mixed", "audiences": [acme.public_id, globex.internal_id]})
    assert response.status_code == 200 and "must belong to the key&#x27;s tenant" in response.content.decode()
    assert not ApiKey.objects.filter(name="mixed").exists()


@pytest.mark.django_db
def test_admin_revokes_keys(acme: Cast) -> None:
    issued = actions.api_key_create(tenant=acme.tenant, name="old bot")
    client = _owner_client(acme)
    response = client.post("/admin/tenants/apikey/", {"action": "revoke", "_selected_action": [issued.api_key.pk]})
    assert response.status_code == 302
    assert ApiKey.objects.get(pk=issued.api_key.pk).revoked_at is not None
    assert api_key_authenticate(raw_key=issued.raw_key) is None
