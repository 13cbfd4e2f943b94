"""In a real browser: an agent logs into the admin, sees only their tenant's escalations,
claims and resolves one; the dashboard renders its charts (and is saved as a screenshot with
SAVE_SCREENSHOTS=1)."""

from __future__ import annotations

import datetime as dt
import os
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from playwright.sync_api import expect

from answering.models import Escalation, Trace
from answering.tests.console_data import escalation_make, trace_make
from config.liveserver import admin_login
from tenants import actions
from tenants.rls import tenant_context

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "dashboard.png"
MINE_Q = "Can the northwind router reboot itself every night at 3am?"
OTHER_Q = "What is the southwind warranty period for cracked screens?"
PASSWORD = "pw-browser-console"
T = TypeVar("T")


@dataclass
class World:
    agent: str
    mine_id: int
    other_id: int
    tenant_id: int


def _dashboard_traces(tenant: Any) -> None:
    """Two weeks of plausible traffic, so the charts have something to show."""
    rng = random.Random(8)
    today = dt.datetime.now(dt.timezone.utc).replace(hour=12, minute=0, second=0, microsecond=0)
    for days_ago in range(13, -1, -1):
        for n in range(rng.randint(6, 14)):
            hit = rng.random() < 0.15 + 0.02 * (13 - days_ago)
            escalated = not hit and rng.random() < 0.3 - 0.015 * (13 - days_ago)
            generate = 0.0 if hit else rng.uniform(350, 1400)
            trace_make(tenant, action="escalated" if escalated else "answered", cache_hit=hit,
                       score=rng.uniform(0.01, 0.05) if escalated else rng.uniform(0.35, 0.95), passed=not escalated,
                       cost="0" if hit or escalated else f"{rng.uniform(0.0004, 0.0021):.6f}",
                       stage_ms={"cache": rng.uniform(2, 6), "retrieve": 0.0 if hit else rng.uniform(40, 120),
                                 "generate": generate},
                       feedback=rng.choice([None, None, 1, -1]), at=today - dt.timedelta(days=days_ago, minutes=n))


def in_thread(django_db_blocker: Any, work: Callable[[], T]) -> T:
    """Database work off the main thread: Playwright's sync API keeps an event loop running
    there, and Django refuses synchronous queries next to a running loop. The worker's own
    connection commits as it goes, which is what the server process needs anyway."""

    def run() -> T:
        try:
            return work()
        finally:
            connection.close()

    with django_db_blocker.unblock(), ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def _make_world() -> World:
    north, _ = actions.tenant_get_or_create(slug="brw-northwind", name="Northwind")
    south, _ = actions.tenant_get_or_create(slug="brw-southwind", name="Southwind")
    user, _ = get_user_model().objects.get_or_create(username="brw-north-agent", defaults={"is_staff": True})
    user.is_staff = True
    user.set_password(PASSWORD)
    user.save()
    user.user_permissions.set(Permission.objects.filter(
        codename__in=["view_escalation", "change_escalation", "view_trace"]))
    actions.membership_grant(tenant=north, user=user, role="agent", audience_slugs=["public", "customer"])
    mine = escalation_make(north, MINE_Q, history=[{"role": "user", "content": "My router keeps dropping."}])
    other = escalation_make(south, OTHER_Q)
    with tenant_context(north.id):
        if not Trace.objects.filter(tenant=north, action="answered").exists():
            _dashboard_traces(north)
    return World(agent=user.username, mine_id=mine.pk, other_id=other.pk, tenant_id=north.id)


@pytest.fixture(scope="module")
def world(django_db_setup: Any, django_db_blocker: Any) -> World:
    """Committed rows: the uvicorn process is another connection and must see them."""
    return in_thread(django_db_blocker, _make_world)


def _status(world: World, django_db_blocker: Any) -> tuple[str, str]:
    def read() -> tuple[str, str]:
        with tenant_context(world.tenant_id):
            row = Escalation.objects.select_related("assignee").get(pk=world.mine_id)
            return row.status, row.assignee.username if row.assignee else ""

    return in_thread(django_db_blocker, read)


def login(page: Any, live_url: str, username: str, next_path: str) -> None:
    admin_login(page, live_url, username=username, password=PASSWORD, next_path=next_path)


def test_agent_claims_and_resolves_only_their_tenants_escalation(world: World, live_url: str, page: Any,
                                                                django_db_blocker: Any) -> None:
    login(page, live_url, world.agent, "/admin/answering/escalation/")
    body = page.locator("#result_list").inner_text()  # the locator waits for the table
    assert MINE_Q[:60] in body
    assert OTHER_Q[:40] not in page.content()  # the other tenant's question is nowhere on the page
    response = page.goto(f"{live_url}/admin/answering/escalation/{world.other_id}/change/")
    assert response is not None and response.status == 404

    page.goto(f"{live_url}/admin/answering/escalation/")
    page.get_by_role("link", name=str(world.mine_id), exact=True).click()
    page.wait_for_url(f"**/admin/answering/escalation/{world.mine_id}/change/")
    expect(page.get_by_text("My router keeps dropping.")).to_be_visible()  # the history
    page.get_by_role("button", name="Claim").click()
    expect(page.locator("ul.messagelist")).to_contain_text("You claimed escalation")
    expect(page.locator("#escalation-work")).to_contain_text(f"Claimed by {world.agent}")
    assert _status(world, django_db_blocker) == ("claimed", world.agent)

    page.get_by_label("Resolution note").fill("Yes: Settings › Maintenance › Nightly reboot, pick 03:00.")
    page.get_by_role("button", name="Resolve").click()
    expect(page.locator("ul.messagelist")).to_contain_text(f"Escalation #{world.mine_id} resolved.")
    assert _status(world, django_db_blocker) == ("resolved", world.agent)


def test_dashboard_renders_charts_for_the_agents_tenant(world: World, live_url: str, page: Any) -> None:
    login(page, live_url, world.agent, "/admin/answering/trace/dashboard/")
    expect(page.locator("svg.ad-chart")).to_have_count(7)  # five answer charts, two reply-time charts
    assert page.locator("#total-queries").inner_text() != "0"
    assert "brw-southwind" not in page.content()
    if os.environ.get("SAVE_SCREENSHOTS") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.set_viewport_size({"width": 1280, "height": 1100})
        page.screenshot(path=str(SCREENSHOT), full_page=True)
