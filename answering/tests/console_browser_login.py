"""Signing in to the admin in a browser test."""

from __future__ import annotations

from typing import Any


def login(page: Any, live_url: str, username: str, password: str, next_path: str) -> None:
    page.goto(f"{live_url}/admin/login/?next={next_path}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"**{next_path}")
