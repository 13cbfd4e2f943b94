"""Dashboard numbers on a known set of traces; another tenant's traces must not move them."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from answering.console.dashboard import daily_metrics
from answering.tests.console_data import staff_client, trace_make

pytestmark = pytest.mark.django_db

DAY0, DAY1, DAY2 = dt.date(2026, 1, 8), dt.date(2026, 1, 9), dt.date(2026, 1, 10)


def at(day: dt.date, hour: int) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, hour, tzinfo=dt.timezone.utc)


@pytest.fixture
def known(acme: Any, globex: Any) -> None:
    day1 = [  # (action, score, kind, cache_hit, cost, latency stages)
        ("answered", 0.8, "rerank", False, "0.002", {"retrieve": 60.0, "generate": 40.0}),
        ("answered", 0.6, "rerank", False, "0.004", {"retrieve": 150.0, "generate": 50.0}),
        ("escalated", 0.02, "rerank", False, "0", {"retrieve": 50.0}),
        ("answered", None, "rerank", True, "0", {"cache": 10.0}),
    ]
    for hour, (action, score, kind, hit, cost, stages) in enumerate(day1):
        trace_make(acme.tenant, action=action, score=score, score_kind=kind, cache_hit=hit, cost=cost,
                   stage_ms=stages, passed=action == "answered", at=at(DAY1, hour))
    trace_make(acme.tenant, score=0.03, score_kind="fusion", cost="0.001", stage_ms={"retrieve": 300.0},
               at=at(DAY2, 23))
    # globex: expensive, slow and always escalating, on the same days
    for hour in range(3):
        trace_make(globex.tenant, action="escalated", score=0.01, passed=False, cost="1.0",
                   stage_ms={"retrieve": 5000.0}, at=at(DAY1, hour))


def test_daily_numbers_on_a_known_set(acme: Any, known: None) -> None:
    board = daily_metrics(tenant_ids=[acme.tenant.id], audiences=None, days=3, until=DAY2)
    empty, day1, day2 = board.days
    assert (empty.day, empty.queries, empty.escalation_rate, empty.mean_confidence) == (DAY0, 0, None, None)
    assert day1.day == DAY1 and day1.queries == 4
    assert day1.escalation_rate == 0.25 and day1.cache_hit_rate == 0.25
    assert day1.mean_confidence == pytest.approx((0.8 + 0.6 + 0.02) / 3)  # the cache hit has no gate score
    assert day1.cost_per_query_usd == Decimal("0.0015")
    assert day1.latency_p50_ms == pytest.approx(75.0)  # between 50 and 100
    assert day1.latency_p95_ms == pytest.approx(185.0)  # 100 + 0.85 * (200 - 100)
    # a fusion score is on another scale: it does not count as a confidence
    assert (day2.queries, day2.mean_confidence, day2.escalation_rate, day2.latency_p50_ms) == (1, None, 0.0, 300.0)
    total = board.total
    assert (total.day, total.queries, total.escalations, total.cache_hits) == (None, 5, 1, 1)
    assert total.mean_confidence == pytest.approx((0.8 + 0.6 + 0.02) / 3)
    assert total.latency_p50_ms == pytest.approx(100.0)
    assert total.cost_usd == Decimal("0.007")


def test_another_tenants_traces_would_move_the_numbers_and_do_not(acme: Any, globex: Any, known: None) -> None:
    mine = daily_metrics(tenant_ids=[acme.tenant.id], audiences=None, days=3, until=DAY2).days[1]
    both = daily_metrics(tenant_ids=[acme.tenant.id, globex.tenant.id], audiences=None, days=3, until=DAY2).days[1]
    assert both.queries == 7 and both.escalation_rate == pytest.approx(4 / 7)  # globex's rows are really there
    assert (mine.queries, mine.escalation_rate) == (4, 0.25)
    assert daily_metrics(tenant_ids=[], audiences=None, days=3, until=DAY2).total.queries == 0


def _total_queries(html: bytes) -> int:
    match = re.search(rb'id="total-queries">(\d+)<', html)
    assert match, html[:2000]
    return int(match.group(1))


def test_dashboard_page_is_scoped_to_the_users_tenants(acme: Any, globex: Any) -> None:
    now = dt.datetime.now(dt.timezone.utc)
    for _ in range(2):
        trace_make(acme.tenant, stage_ms={"retrieve": 80.0}, at=now)
    for _ in range(5):
        trace_make(globex.tenant, action="escalated", passed=False, score=0.01, at=now)
    agent = staff_client(acme.agent)
    response = agent.get("/admin/answering/trace/dashboard/")
    assert response.status_code == 200
    assert _total_queries(response.content) == 2
    assert response.content.count(b"<svg") >= 5 and b"Escalation rate" in response.content
    assert b"globex" not in response.content

    outsider = staff_client(acme.outsider)  # staff with the permissions, no membership
    assert _total_queries(outsider.get("/admin/answering/trace/dashboard/").content) == 0

    root = get_user_model().objects.create_superuser("dash-root", password="pw")
    superuser = staff_client(root)
    assert _total_queries(superuser.get("/admin/answering/trace/dashboard/").content) >= 7


def test_dashboard_needs_the_trace_view_permission(acme: Any) -> None:
    assert b'href="/admin/answering/trace/dashboard/"' in staff_client(acme.agent).get("/admin/").content
    client = staff_client(acme.agent, "view_escalation")
    assert b"/admin/answering/trace/dashboard/" not in client.get("/admin/").content
    assert client.get("/admin/answering/trace/dashboard/").status_code == 403
