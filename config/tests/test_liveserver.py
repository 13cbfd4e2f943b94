"""The live-server and browser fixtures work: uvicorn on loopback, Debian's Chromium."""

from __future__ import annotations

from typing import Any

import httpx
import pytest


@pytest.mark.slow
def test_live_server_answers_health(live_url: str) -> None:
    response = httpx.get(f"{live_url}/health", timeout=10)
    assert response.status_code == 200 and response.json()["database"]["reachable"] is True


@pytest.mark.slow
def test_browser_opens_the_admin_login(live_url: str, page: Any) -> None:
    page.goto(f"{live_url}/admin/login/")
    assert page.locator("input[name=username]").is_visible()
    assert "Answerdesk" in page.title()
