"""Fixed-window counters in PostgreSQL: the limit holds, windows end, buckets stay apart."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connections

from tenants.ratelimit import rate_limit, rate_limit_sweep


def _bucket(kind: str) -> str:
    return f"test-{kind}:{uuid.uuid4().hex}"


@pytest.mark.django_db
def test_the_request_after_the_limit_is_refused_with_retry_after() -> None:
    bucket = _bucket("limit")
    decisions = [rate_limit(bucket=bucket, limit=3, window_seconds=60) for _ in range(5)]
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    assert [d.remaining for d in decisions[:3]] == [2, 1, 0]
    refused = decisions[3]
    assert 1 <= refused.retry_after <= 60
    assert decisions[0].retry_after == 0


@pytest.mark.django_db
def test_buckets_do_not_share_a_counter() -> None:
    first, second = _bucket("a"), _bucket("b")
    assert rate_limit(bucket=first, limit=1, window_seconds=60).allowed
    assert not rate_limit(bucket=first, limit=1, window_seconds=60).allowed
    assert rate_limit(bucket=second, limit=1, window_seconds=60).allowed


@pytest.mark.django_db
def test_a_new_window_starts_a_new_count() -> None:
    bucket = _bucket("window")
    assert rate_limit(bucket=bucket, limit=1, window_seconds=1).allowed
    refused = rate_limit(bucket=bucket, limit=1, window_seconds=1)
    if refused.allowed:  # the second call crossed a window boundary; try again in the new one
        refused = rate_limit(bucket=bucket, limit=1, window_seconds=1)
    assert not refused.allowed and refused.retry_after == 1
    time.sleep(1.05)
    assert rate_limit(bucket=bucket, limit=1, window_seconds=1).allowed


@pytest.mark.django_db
def test_zero_means_unlimited_and_writes_nothing() -> None:
    bucket = _bucket("off")
    assert all(rate_limit(bucket=bucket, limit=0, window_seconds=60).allowed for _ in range(5))
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM tenants_ratelimit WHERE bucket = %(b)s", {"b": bucket})
        assert cursor.fetchone() == (0,)


@pytest.mark.django_db
def test_sweep_removes_only_windows_that_ended() -> None:
    ended, live = _bucket("ended"), _bucket("live")
    rate_limit(bucket=ended, limit=5, window_seconds=1)
    rate_limit(bucket=live, limit=5, window_seconds=3600)
    time.sleep(1.05)
    assert rate_limit_sweep() >= 1
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT bucket FROM tenants_ratelimit WHERE bucket IN (%(a)s, %(b)s)", {"a": ended, "b": live})
        assert [row[0] for row in cursor.fetchall()] == [live]


def test_concurrent_requests_never_exceed_the_limit(django_db_setup: Any, django_db_blocker: Any) -> None:
    """Twenty requests on separate connections at once, limit eight: exactly eight pass."""
    bucket = _bucket("race")

    def one(_: int) -> bool:
        try:
            return rate_limit(bucket=bucket, limit=8, window_seconds=3600).allowed
        finally:
            connections.close_all()

    with django_db_blocker.unblock():
        with ThreadPoolExecutor(max_workers=10) as pool:
            results = list(pool.map(one, range(20)))
    assert results.count(True) == 8


class _Request:
    def __init__(self, remote: str, forwarded: str | None = None) -> None:
        self.META = {"REMOTE_ADDR": remote}
        if forwarded is not None:
            self.META["HTTP_X_FORWARDED_FOR"] = forwarded


def test_client_address_ignores_forwarded_for_unless_a_proxy_is_trusted(settings: Any) -> None:
    from tenants.ratelimit import client_address

    settings.RATE_LIMIT_TRUSTED_PROXIES = 0
    assert client_address(_Request("10.0.0.5", "1.2.3.4")) == "10.0.0.5"
    settings.RATE_LIMIT_TRUSTED_PROXIES = 1
    # The client wrote "6.6.6.6" itself; our one proxy appended the address it saw.
    assert client_address(_Request("10.0.0.5", "6.6.6.6, 203.0.113.7")) == "203.0.113.7"
    assert client_address(_Request("10.0.0.5")) == "10.0.0.5"
