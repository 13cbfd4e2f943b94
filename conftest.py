"""Shared fixtures: the throwaway database and a named cast per tenant."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import translation

pytest_plugins = ["config.liveserver"]


@pytest.fixture(autouse=True)
def _default_language_after_each_test() -> Any:
    """LocaleMiddleware leaves the last request's language active in its thread: a test that
    asked for Czech pages must not make the next test's direct calls speak Czech."""
    yield
    translation.deactivate()


@pytest.fixture(scope="session")
def django_db_setup(django_db_blocker: Any) -> None:
    """Start the throwaway embedded server (config/testing.py) and migrate it as the owner."""
    if not os.environ.get("DATABASE_URL"):
        from config.embedded_db import ensure_running

        ensure_running(Path(os.environ["ANSWERDESK_PGDATA"]))
    with django_db_blocker.unblock():
        call_command("migrate", verbosity=0)


@dataclass
class Cast:
    """One tenant and its people: an owner, an agent, and an outsider who must see nothing."""

    tenant: Any
    owner: Any
    agent: Any
    outsider: Any
    public_id: int
    customer_id: int
    internal_id: int


def _make_cast(slug: str) -> Cast:
    from django.contrib.auth import get_user_model

    from tenants import actions
    from tenants.models import Audience

    User = get_user_model()
    tenant, _ = actions.tenant_get_or_create(slug=slug)
    owner, _ = User.objects.get_or_create(username=f"{slug}-owner", defaults={"is_staff": True})
    agent, _ = User.objects.get_or_create(username=f"{slug}-agent", defaults={"is_staff": True})
    outsider, _ = User.objects.get_or_create(username=f"{slug}-outsider", defaults={"is_staff": True})
    for user in (owner, agent, outsider):
        user.set_password("pw")
        user.save()
    actions.membership_grant(tenant=tenant, user=owner, role="owner", audience_slugs=["public", "customer", "internal"])
    actions.membership_grant(tenant=tenant, user=agent, role="agent", audience_slugs=["public", "customer"])
    ids = dict(Audience.objects.filter(tenant=tenant).values_list("slug", "id"))
    return Cast(tenant, owner, agent, outsider, ids["public"], ids["customer"], ids["internal"])


def czech_cast(slug: str, *, root: Any, pages: dict[str, str]) -> Cast:
    """A cast whose tenant writes in Czech (keyed, `simple` text search), `pages` written under
    `root` and ingested."""
    from corpus.ingest.flow import ingest_paths
    from tenants.models import Tenant

    cast = _make_cast(slug)
    Tenant.objects.filter(pk=cast.tenant.pk).update(language="cs", text_search_config="simple")
    cast.tenant.refresh_from_db()
    for name, text in pages.items():
        (root / name).write_text(text)
    ingest_paths(tenant=cast.tenant, paths=[root])
    return cast


@pytest.fixture
def acme(db: Any) -> Cast:
    return _make_cast("acme")


@pytest.fixture
def globex(db: Any) -> Cast:
    return _make_cast("globex")


@pytest.fixture
def uploads_in_tmp(settings: Any, tmp_path: Path) -> None:
    """Uploads land in the test's own folder, never in the developer's var/media."""
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture(scope="session")
def demo_corpus(django_db_setup: Any, django_db_blocker: Any) -> list[Any]:
    """The committed demo corpus, loaded once per session and committed (read by other connections too)."""
    from corpus.demo.load import demo_load

    with django_db_blocker.unblock():
        return demo_load()
