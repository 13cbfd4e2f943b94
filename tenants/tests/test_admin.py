"""The admin shows staff their own tenants' rows; other tenants' rows are 404s."""

from __future__ import annotations

import pytest
from django.test import Client

from conftest import Cast
from corpus.models import Document
from tenants import actions
from tenants.models import ApiKey
from tenants.tests.planting import plant


@pytest.fixture
def keys(acme: Cast, globex: Cast) -> tuple[ApiKey, ApiKey]:
    a = actions.api_key_create(tenant=acme.tenant, name="acme widget").api_key
    g = actions.api_key_create(tenant=globex.tenant, name="globex widget").api_key
    return a, g


def _client(user: object) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_agent_sees_own_keys_and_not_others(acme: Cast, globex: Cast, keys: tuple[ApiKey, ApiKey]) -> None:
    acme.agent.is_superuser = False
    acme.agent.save()
    from django.contrib.auth.models import Permission

    acme.agent.user_permissions.set(Permission.objects.filter(codename__in=["view_apikey", "view_document"]))
    client = _client(acme.agent)
    listing = client.get("/admin/tenants/apikey/")
    assert listing.status_code == 200
    assert b"acme widget" in listing.content
    assert b"globex widget" not in listing.content
    assert client.get(f"/admin/tenants/apikey/{keys[1].pk}/change/").status_code in (302, 404)
    assert client.get(f"/admin/tenants/apikey/{keys[0].pk}/change/").status_code == 200


@pytest.mark.django_db
def test_document_metadata_visible_to_members_only(acme: Cast, globex: Cast) -> None:
    from django.contrib.auth.models import Permission

    plant(tenant_id=acme.tenant.id, audience_id=acme.internal_id, slug="adm/acme-doc", content="acme text")
    globex_doc = plant(tenant_id=globex.tenant.id, audience_id=globex.public_id, slug="adm/globex-doc", content="g")
    for user in (acme.agent, acme.outsider):
        user.user_permissions.set(Permission.objects.filter(codename="view_document"))
    listing = _client(acme.agent).get("/admin/corpus/document/")
    assert b"adm/acme-doc" in listing.content and b"adm/globex-doc" not in listing.content
    assert _client(acme.agent).get(f"/admin/corpus/document/{globex_doc}/change/").status_code in (302, 404)
    outsider_listing = _client(acme.outsider).get("/admin/corpus/document/")
    assert b"adm/acme-doc" not in outsider_listing.content


@pytest.mark.django_db
def test_document_rows_are_invisible_without_a_staff_or_scope_context(acme: Cast) -> None:
    """RLS on documents: a bare ORM read outside any context sees nothing."""
    plant(tenant_id=acme.tenant.id, audience_id=acme.public_id, slug="adm/bare", content="x")
    assert not Document.objects.filter(slug="adm/bare").exists()


@pytest.mark.django_db
def test_superuser_sees_all_tenants(acme: Cast, globex: Cast, keys: tuple[ApiKey, ApiKey]) -> None:
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root", "r@example.com", "pw")
    listing = _client(root).get("/admin/tenants/apikey/")
    assert b"acme widget" in listing.content and b"globex widget" in listing.content


@pytest.mark.django_db
def test_api_keys_are_stored_hashed(acme: Cast) -> None:
    issued = actions.api_key_create(tenant=acme.tenant, name="k")
    stored = ApiKey.objects.get(pk=issued.api_key.pk)
    assert issued.raw_key.startswith(stored.prefix)
    assert issued.raw_key not in stored.key_hash
    assert stored.key_hash == actions.hash_api_key(issued.raw_key)
