"""The admin shows staff their own tenants' rows; other tenants' rows are 404s."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from conftest import Cast
from corpus.models import Document
from tenants import actions
from tenants.models import ApiKey, Membership, Tenant
from tenants.tests.planting import plant


@pytest.fixture
def keys(acme: Cast, globex: Cast) -> tuple[ApiKey, ApiKey]:
    a = actions.api_key_create(tenant=acme.tenant, name="acme widget").api_key
    g = actions.api_key_create(tenant=globex.tenant, name="globex widget").api_key
    return a, g


def _client(user: User) -> Client:
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

    plant(tenant_id=acme.tenant.id, audience_id=acme.customer_id, slug="adm/acme-doc", content="acme text")
    internal = plant(tenant_id=acme.tenant.id, audience_id=acme.internal_id, slug="adm/acme-internal", content="i")
    globex_doc = plant(tenant_id=globex.tenant.id, audience_id=globex.public_id, slug="adm/globex-doc", content="g")
    for user in (acme.agent, acme.outsider):
        user.user_permissions.set(Permission.objects.filter(codename="view_document"))
    listing = _client(acme.agent).get("/admin/corpus/document/")
    assert b"adm/acme-doc" in listing.content and b"adm/globex-doc" not in listing.content
    # the agent holds public and customer: an internal document's metadata is not theirs either
    assert b"adm/acme-internal" not in listing.content
    assert _client(acme.agent).get(f"/admin/corpus/document/{internal}/change/").status_code == 404
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


# -- roles and audiences (issue 15, items 3 and 9) ----------------------------------------

KEY_PERMISSIONS = ("view_apikey", "add_apikey", "change_apikey", "view_membership", "add_membership",
                   "change_membership", "view_membershipaudience", "add_membershipaudience",
                   "change_membershipaudience", "delete_membershipaudience", "view_apikeyaudience",
                   "add_apikeyaudience", "change_apikeyaudience", "delete_apikeyaudience", "view_tenant",
                   "change_tenant")


def _staff(user: Any, role: str | None = None, audiences: tuple[str, ...] = (), tenant: Any = None) -> Client:
    from django.contrib.auth.models import Permission

    if role is not None:
        actions.membership_grant(tenant=tenant, user=user, role=role, audience_slugs=list(audiences))
    user.is_staff = True
    user.save()
    user.user_permissions.set(Permission.objects.filter(codename__in=KEY_PERMISSIONS))
    return _client(user)


def _narrow_owner(cast: Cast) -> Any:
    """A tenant admin who holds public and customer, not internal."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(f"{cast.tenant.slug}-narrow-owner", password="pw")
    _staff(user, "owner", ("public", "customer"), cast.tenant)
    return user


@pytest.mark.django_db
def test_an_agent_cannot_create_or_revoke_keys(acme: Cast, keys: tuple[ApiKey, ApiKey]) -> None:
    agent = _staff(acme.agent)
    assert agent.get("/admin/tenants/apikey/add/").status_code == 403
    response = agent.post("/admin/tenants/apikey/add/", {"tenant": acme.tenant.id, "name": "mine",
                                                         "audiences": [acme.public_id]})
    assert response.status_code == 403
    assert not ApiKey.objects.filter(name="mine").exists()
    agent.post("/admin/tenants/apikey/", {"action": "revoke", "_selected_action": [keys[0].pk]})
    assert ApiKey.objects.get(pk=keys[0].pk).revoked_at is None


@pytest.mark.django_db
def test_key_form_offers_and_accepts_only_the_creators_audiences(acme: Cast, globex: Cast) -> None:
    owner = _client(_narrow_owner(acme))
    form = owner.get("/admin/tenants/apikey/add/").content.decode()
    assert f'value="{acme.public_id}"' in form and f'value="{acme.customer_id}"' in form
    assert f'value="{acme.internal_id}"' not in form and f'value="{globex.public_id}"' not in form
    forged = owner.post("/admin/tenants/apikey/add/", {"tenant": acme.tenant.id, "name": "forged",
                                                       "audiences": [acme.public_id, acme.internal_id]})
    assert forged.status_code == 200 and not ApiKey.objects.filter(name="forged").exists()
    assert "errorlist" in forged.content.decode()


@pytest.mark.django_db
def test_key_form_clean_refuses_an_audience_the_creator_does_not_hold(acme: Cast) -> None:
    """The form's own clean, with the internal audience in its queryset (as if offered by mistake)."""
    from tenants.admin import ApiKeyCreateForm
    from tenants.models import Audience

    form_class = type("Form", (ApiKeyCreateForm,), {"offered_audiences": Audience.objects.filter(tenant=acme.tenant),
                                                    "held_audience_ids": frozenset({acme.public_id})})
    form = form_class({"tenant": acme.tenant.id, "name": "x", "audiences": [acme.internal_id]})
    assert not form.is_valid()
    assert "do not hold the audience internal" in str(form.errors)


@pytest.mark.django_db
def test_new_key_is_shown_once_in_the_response_page_never_in_the_messages_cookie(acme: Cast) -> None:
    owner = _staff(acme.owner)
    response = owner.post("/admin/tenants/apikey/add/", {"tenant": acme.tenant.id, "name": "shown once",
                                                         "audiences": [acme.public_id]})
    assert response.status_code == 200, response.content[:500]
    raw = re.search(r'<pre id="raw-key"[^>]*>\s*(\S+)\s*</pre>', response.content.decode())
    assert raw, response.content.decode()[:2000]
    stored = ApiKey.objects.get(name="shown once")
    assert stored.key_hash == actions.hash_api_key(raw.group(1))
    assert "no-store" in response["Cache-Control"]
    cookie = response.cookies.get("messages")
    assert cookie is None or raw.group(1) not in cookie.value
    follow = owner.get("/admin/tenants/apikey/")
    assert raw.group(1) not in follow.content.decode()
    assert raw.group(1) not in str(owner.session.items())


@pytest.mark.django_db
def test_membership_inline_lists_only_the_rows_tenant_and_the_editors_audiences(acme: Cast, globex: Cast) -> None:
    narrow = _narrow_owner(acme)
    owner = _client(narrow)
    membership = actions.membership_grant(tenant=acme.tenant, user=acme.outsider, role="agent",
                                          audience_slugs=["public"])
    page = owner.get(f"/admin/tenants/membership/{membership.pk}/change/").content.decode()
    assert ">acme/customer<" in page
    assert ">acme/internal<" not in page and ">globex/public<" not in page
    root = _client(type(acme.owner).objects.create_superuser("inline-root", password="pw"))
    page = root.get(f"/admin/tenants/membership/{membership.pk}/change/").content.decode()
    assert ">acme/internal<" in page and ">globex/public<" not in page


@pytest.mark.django_db
def test_memberships_are_managed_by_tenant_admins_within_their_audiences(acme: Cast) -> None:
    agent = _staff(acme.agent)
    mine = actions.membership_grant(tenant=acme.tenant, user=acme.agent, role="agent",
                                    audience_slugs=["public", "customer"])
    assert 'name="role"' not in agent.get(f"/admin/tenants/membership/{mine.pk}/change/").content.decode()
    agent.post(f"/admin/tenants/membership/{mine.pk}/change/", {"tenant": acme.tenant.id, "user": acme.agent.pk,
                                                                 "role": "owner"})
    assert Membership.objects.get(pk=mine.pk).role == "agent"
    # a narrower tenant admin cannot edit the full owner's membership (it holds internal)
    narrow = _client(_narrow_owner(acme))
    full = Membership.objects.get(tenant=acme.tenant, user=acme.owner)
    assert 'name="role"' not in narrow.get(f"/admin/tenants/membership/{full.pk}/change/").content.decode()
    assert 'name="role"' in narrow.get(f"/admin/tenants/membership/{mine.pk}/change/").content.decode()


@pytest.mark.django_db
def test_platform_fields_are_for_superusers(acme: Cast) -> None:
    owner = _staff(acme.owner)
    page = owner.get(f"/admin/tenants/tenant/{acme.tenant.id}/change/").content.decode()
    assert 'name="name"' in page
    assert 'name="daily_spend_cap_usd"' not in page and 'name="text_search_config"' not in page
    assert 'id="id_language"' not in page  # the form field; the console language switch has its own id
    owner.post(f"/admin/tenants/tenant/{acme.tenant.id}/change/", {
        "slug": acme.tenant.slug, "name": "Acme Renamed", "daily_spend_cap_usd": "999", "text_search_config": "simple"})
    tenant = Tenant.objects.get(pk=acme.tenant.id)
    assert tenant.name == "Acme Renamed"
    assert tenant.daily_spend_cap_usd is None and tenant.text_search_config == "english"
    agent = _staff(acme.agent)
    assert 'name="name"' not in agent.get(f"/admin/tenants/tenant/{acme.tenant.id}/change/").content.decode()
    root = _client(type(acme.owner).objects.create_superuser("platform-root", password="pw"))
    page = root.get(f"/admin/tenants/tenant/{acme.tenant.id}/change/").content.decode()
    assert 'name="daily_spend_cap_usd"' in page and 'name="text_search_config"' in page and 'id="id_language"' in page


@pytest.mark.django_db
def test_a_language_change_tells_the_superuser_to_re_encode_and_re_ingest(acme: Cast) -> None:
    """The tenant's vectors and keyword keys were made for the old language (0112); saving the
    new one says what follows, and a save that leaves the language alone says nothing of it."""
    root = _client(type(acme.owner).objects.create_superuser("platform-lang", password="pw"))
    url = f"/admin/tenants/tenant/{acme.tenant.id}/change/"
    form = {"slug": acme.tenant.slug, "name": acme.tenant.name, "daily_spend_cap_usd": "",
            "text_search_config": "simple", "language": "cs"}
    page = root.post(url, form, follow=True).content.decode()
    assert Tenant.objects.get(pk=acme.tenant.id).language == "cs"
    assert f"reembed --tenant {acme.tenant.slug}" in page
    again = root.post(url, form, follow=True).content.decode()
    assert "reembed --tenant" not in again
