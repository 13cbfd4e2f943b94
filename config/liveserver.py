"""pytest fixtures: the real ASGI app served by uvicorn on loopback, and headless Chromium.

Why not pytest-django's `live_server`: it needs `transactional_db`, whose teardown flushes
tables with TRUNCATE, which the app role is deliberately not granted. Here the server is a
real uvicorn process against the throwaway database; whatever a test wants the server to
see must be committed (create it inside `django_db_blocker.unblock()`, outside a test
transaction), exactly as the demo corpus is.

Browser: Debian's chromium (`make test` installs it) driven by Playwright's Python package
with `executable_path`; Playwright never downloads a browser of its own here.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags Chromium keeps dialling Google on a closed network.
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """uvicorn serving config.asgi on 127.0.0.1 in its own process, with `extra_env` on top of
    the test environment (a fault test points ANSWER_PROVIDERS at a failing fake provider).
    Yields the base URL once /health answers 200; stops the process on the way out."""
    port = _free_port()
    log = tempfile.NamedTemporaryFile(prefix="adlive-", suffix=".log", delete=False)
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--lifespan", "off", "--log-level", "warning"],
        cwd=Path(__file__).resolve().parent.parent, env={**os.environ, "LIVE_SERVER": "1", **(extra_env or {})},
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"uvicorn exited: {Path(log.name).read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not answer /health: {Path(log.name).read_text()[-2000:]}")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        os.unlink(log.name)


@pytest.fixture(scope="session")
def live_url(django_db_setup: Any) -> Iterator[str]:
    """Base URL (no trailing slash) of the app served on loopback for the whole session (it
    inherits the throwaway database's environment and loads the model itself)."""
    # Every test shares 127.0.0.1, so per-address limits would let one module starve the next
    # (the chat page's 20 a minute did); limits are tested in-process and with per-key limits.
    with serve({"CHAT_RATE_LIMIT_PER_ADDRESS": "100000", "API_RATE_LIMIT_PER_ADDRESS": "100000"}) as url:
        yield url


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """A headless Chromium; the test is skipped (said out loud) only when the binary is missing.

    Module-scoped on purpose: Playwright's sync API keeps an asyncio loop running on the test
    thread while it is open, and Django then refuses every database call on that thread
    (SynchronousOnlyOperation) in whatever test runs next; closing it with the module ends that."""
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: `make test` installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="adchrome-")
    with sync_playwright() as p:
        # Playwright makes its own empty profile per launch; `profile` is only its temp dir.
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                    env={"TMPDIR": profile, "HOME": profile})
        try:
            yield browser
        finally:
            browser.close()
            shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def browser_page(chromium: Any, **context_options: Any) -> Iterator[Any]:
    """A fresh browser context (own cookies) and page, desktop size; options such as `locale`."""
    context = chromium.new_context(viewport={"width": 1280, "height": 860}, **context_options)
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        yield page
    finally:
        context.close()


def wait_until(target: Any, expression: str, *, timeout_s: float = 15.0) -> None:
    """Poll `expression` in a page or frame until it is truthy. Playwright's wait_for_function
    compiles its predicate inside the page, which the chat's CSP (no 'unsafe-eval') refuses as
    soon as the first check is false and it has to poll (a loaded machine's widget test went red
    on it); `evaluate` runs through the DevTools protocol, which the CSP does not govern."""
    deadline = time.monotonic() + timeout_s
    while not target.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout_s:.0f} s: {expression}")
        time.sleep(0.05)


def collect_problems(page: Any, problems: list[str]) -> None:
    """Note each script error, console error and failed request of `page` in `problems`."""
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda message: problems.append(f"console: {message.text}")
            if message.type == "error" else None)
    page.on("response", lambda response: problems.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)


def admin_login(page: Any, live_url: str, *, username: str, password: str, next_path: str) -> None:
    """Sign in to the console through its login form and land on `next_path`."""
    page.goto(f"{live_url}/admin/login/?next={next_path}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"**{next_path}")


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A fresh browser context (own cookies) and page per test, desktop size."""
    with browser_page(chromium) as page:
        yield page
