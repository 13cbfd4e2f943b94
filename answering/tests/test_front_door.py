"""The front door (`/`), and the 404 and 500 pages with DEBUG off (issue 19 item 4).

pytest-django runs with DEBUG off, as production does: the 404 and 500 pages here are the
product's own templates, not Django's debug pages.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import include, path

from tenants import actions
from tenants.models import Tenant


def _boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug, on purpose")


# For the 500 test: the project's URLs plus one view that fails.
urlpatterns = [path("boom", _boom), path("", include("config.urls"))]


@pytest.fixture
def front_tenants(db: Any) -> tuple[Tenant, Tenant]:
    listed = actions.tenant_create(slug="shown-co", name="Shown Company")
    unlisted = actions.tenant_create(slug="quiet-co", name="Quietly Kept Company")
    Tenant.objects.filter(pk=listed.pk).update(listed=True)
    return listed, unlisted


def test_the_front_door_links_listed_tenants_only(client: Client, front_tenants: Any, settings: Any) -> None:
    settings.FRONT_DOOR_TENANT = None
    response = client.get("/")
    body = response.content.decode()
    assert response.status_code == 200
    assert 'href="/t/shown-co/"' in body and "Shown Company" in body
    assert "quiet-co" not in body and "Quietly Kept" not in body
    assert 'href="/admin/"' in body and 'href="/api/v1/docs"' in body
    assert client.get("/api/v1/docs").status_code == 200


def test_a_deployment_can_send_the_front_door_to_one_tenant(client: Client, front_tenants: Any,
                                                           settings: Any) -> None:
    settings.FRONT_DOOR_TENANT = "shown-co"
    response = client.get("/")
    assert response.status_code == 302 and response["Location"] == "/t/shown-co/"


def test_the_demo_tenants_are_listed_after_load_demo(client: Client, demo_corpus: Any, db: Any,
                                                     settings: Any) -> None:
    """`make run` runs load_demo, which lists the demo tenants even when they were loaded before."""
    from corpus.demo.load import demo_settings_apply

    Tenant.objects.filter(slug__in=["paylane", "helpwise"]).update(listed=False)
    demo_settings_apply()  # what a second `make run` does on an existing database
    settings.FRONT_DOOR_TENANT = None
    body = client.get("/").content.decode()
    assert 'href="/t/paylane/"' in body and 'href="/t/helpwise/"' in body


def test_404_is_the_products_page_with_debug_off(client: Client, db: Any, settings: Any) -> None:
    settings.DEBUG = False
    for url in ("/no-such-page", "/t/no-such-tenant/"):
        response = client.get(url)
        body = response.content.decode()
        assert response.status_code == 404
        assert "Page not found" in body and "Answerdesk" in body and 'href="/"' in body
        assert "Django" not in body and "URLconf" not in body


@pytest.mark.urls(__name__)
def test_500_is_the_products_page_with_debug_off(db: Any, settings: Any) -> None:
    settings.DEBUG = False
    client = Client(raise_request_exception=False)
    response = client.get("/boom")
    body = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong" in body and "Answerdesk" in body
    assert "a bug, on purpose" not in body and "Traceback" not in body
