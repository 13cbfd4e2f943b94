"""Brute force on the admin login: limited per client address and per username.

API-key guessing is limited per address before any key lookup; that is tested in
answering/tests/test_api_limits.py::test_an_address_over_its_limit_gets_429_even_with_fresh_keys_or_none.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

LOGIN = "/admin/login/"
# A window that cannot turn during a test (windows start at multiples of it since 1970), so
# counts are exact; one test keeps the 15-minute default and tolerates a turn instead.
NO_TURN = 10**9


@pytest.fixture
def limits(settings: Any) -> Any:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed only
    settings.LOGIN_FAILURES_PER_USERNAME = 3
    settings.LOGIN_FAILURES_PER_ADDRESS = 5
    settings.LOGIN_FAILURE_WINDOW_SECONDS = NO_TURN
    return settings


def staff(password: str = "right-pw") -> Any:
    user = get_user_model().objects.create_user(username=f"staff-{uuid.uuid4().hex[:8]}", password=password,
                                                is_staff=True)
    return user


def address() -> str:
    """A fresh client address (one in 16 million, so tests never share a counter)."""
    n = uuid.uuid4().int % 2**24
    return f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}"


def attempt(username: str, password: str, ip: str) -> Any:
    # A fresh client per attempt: no session carries over, as with a scripted attacker.
    return Client().post(LOGIN, {"username": username, "password": password, "next": "/admin/"}, REMOTE_ADDR=ip)


def signed_in(response: Any) -> bool:
    return response.status_code == 302 and response["Location"] == "/admin/"


def refused(response: Any) -> bool:
    return response.status_code == 429


@pytest.mark.django_db
def test_a_username_is_locked_after_its_failures_whatever_the_address(limits: Any) -> None:
    user = staff()
    for _ in range(3):
        failed = attempt(user.username, "guess", address())
        assert failed.status_code == 200 and b"errornote" in failed.content  # the ordinary wrong-password page
    # Even the right password from yet another address: checking it would let guessing go on.
    locked = attempt(user.username, "right-pw", address())
    assert refused(locked)
    assert 0 < int(locked["Retry-After"]) <= NO_TURN
    assert b"Too many failed sign-in attempts" in locked.content
    assert user.username.encode() not in locked.content
    # Other usernames are not affected by it.
    assert signed_in(attempt(staff().username, "right-pw", address()))


@pytest.mark.django_db
def test_an_address_is_locked_after_its_failures_and_other_addresses_are_not(limits: Any) -> None:
    ip, victim = address(), staff()
    for _ in range(5):  # spread over usernames, so the per-username limit never trips
        assert attempt(f"nobody-{uuid.uuid4().hex[:6]}", "guess", ip).status_code == 200
    assert refused(attempt(victim.username, "right-pw", ip))
    assert refused(attempt(f"nobody-{uuid.uuid4().hex[:6]}", "guess", ip))
    assert signed_in(attempt(victim.username, "right-pw", address()))


@pytest.mark.django_db
def test_a_refusal_does_not_reveal_whether_the_username_exists(limits: Any) -> None:
    real, ghost = staff().username, f"ghost-{uuid.uuid4().hex[:8]}"
    bodies = {}
    for username in (real, ghost):
        for _ in range(3):
            assert attempt(username, "guess", address()).status_code == 200
        response = attempt(username, "guess", address())
        assert refused(response)
        bodies[username] = (response.status_code, re.sub(rb"\d+", b"N", response.content),
                            sorted(k for k, _ in response.items()))
    assert bodies[real] == bodies[ghost]


@pytest.mark.django_db
def test_successful_sign_ins_do_not_spend_the_budget(limits: Any) -> None:
    ip, user = address(), staff()
    for _ in range(8):  # more than either limit
        assert signed_in(attempt(user.username, "right-pw", ip))
    # The whole failure budget is still there: three failures, then the fourth is refused.
    for _ in range(3):
        assert attempt(user.username, "guess", ip).status_code == 200
    assert refused(attempt(user.username, "guess", ip))


@pytest.mark.django_db
def test_usernames_are_counted_case_and_space_insensitively(limits: Any) -> None:
    user = staff()
    for variant in (user.username.upper(), f" {user.username}", user.username.title()):
        assert attempt(variant, "guess", address()).status_code == 200
    assert refused(attempt(user.username, "right-pw", address()))


@pytest.mark.django_db
def test_the_sign_in_page_itself_is_never_refused(limits: Any) -> None:
    ip = address()
    for _ in range(6):
        attempt(f"nobody-{uuid.uuid4().hex[:6]}", "guess", ip)
    page = Client().get(LOGIN, REMOTE_ADDR=ip)
    assert page.status_code == 200 and b'name="password"' in page.content


@pytest.mark.django_db
def test_the_defaults_are_ten_failures_per_username_per_fifteen_minutes(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    assert (settings.LOGIN_FAILURES_PER_USERNAME, settings.LOGIN_FAILURE_WINDOW_SECONDS) == (10, 900)
    assert settings.LOGIN_FAILURES_PER_ADDRESS == 20
    user, statuses = staff(), []
    # Spread over addresses; the window may turn once meanwhile, so allow up to twice the limit.
    for _ in range(21):
        statuses.append(attempt(user.username, "guess", address()).status_code)
        if statuses[-1] == 429:
            break
    assert statuses[-1] == 429 and len(statuses) - 1 in (10, 20), statuses
    locked = attempt(user.username, "right-pw", address())
    assert refused(locked) and 1 <= int(locked["Retry-After"]) <= 900
