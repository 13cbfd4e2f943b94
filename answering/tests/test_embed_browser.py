"""The widget in Chromium on a plain page served from another loopback port (issue 19 item 1).

The host pages are static HTML on their own ports (another origin; the same site, so the
browser would send the server's cookies if it had any: the test checks it never gets one).
Only the first host's origin is in PayLane's embed origins; the second one's frame gets a
notice naming its origin and where to allow it (issue 48), never the chat.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from answering.tests.test_chat_browser import SCREENSHOTS, off_loop
from tenants.models import Tenant
from config.liveserver import wait_until

HOST_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>PayLane shop</title></head>
<body><h1>A shop that is not Answerdesk</h1><p><a href="#top">A link of the host page</a></p>
<script src="{server}/embed.js" data-tenant="paylane" async></script></body></html>"""


@contextmanager
def host_site(html: str) -> Iterator[str]:
    """A plain HTML page at / on a free loopback port; yields its origin."""
    body = html.encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def paylane_embeddable(live_url: str, django_db_blocker: Any, request: pytest.FixtureRequest) -> Iterator[
        Callable[[str], None]]:
    """Sets PayLane's embed origins (committed: the server is another process); restores them after."""
    off_loop(django_db_blocker, lambda: request.getfixturevalue("demo_corpus"))

    def allow(origins: str) -> None:
        off_loop(django_db_blocker, lambda: Tenant.objects.filter(slug="paylane").update(embed_origins=origins))

    yield allow
    allow("")


# Shown to a sighted visitor: laid out larger than the 1 px of a visually hidden element, and not
# hidden by `visibility` or `display`. (Playwright's is_visible counts 1 px as visible.)
SEEN = """(el) => { const r = el.getBoundingClientRect();
  return r.width > 1 && r.height > 1 && el.checkVisibility({visibilityProperty: true}); }"""


def _seen(locator: Any) -> list[str]:
    """The texts of the elements of `locator` that a sighted visitor sees."""
    return [locator.nth(i).inner_text().strip() for i in range(locator.count()) if locator.nth(i).evaluate(SEEN)]


def _chat_frame(page: Any) -> Any:
    wait_until(page, "document.querySelector('iframe') !== null")
    for _ in range(100):
        frames = [f for f in page.frames if "/t/paylane/embed/" in f.url]
        if frames:
            return frames[0]
        page.wait_for_timeout(100)
    raise AssertionError("no chat frame")


def test_the_widget_opens_asks_and_remembers_on_an_allowed_origin(live_url: str, paylane_embeddable: Any,
                                                                  chromium: Any) -> None:
    with host_site(HOST_PAGE.format(server=live_url)) as host:
        paylane_embeddable(f"https://help.paylane.test\n{host}")
        assert host in httpx.get(f"{live_url}/t/paylane/embed/").headers["content-security-policy"]
        context = chromium.new_context(viewport={"width": 1280, "height": 860})
        try:
            page = context.new_page()
            page.set_default_timeout(20_000)
            page.goto(host)
            launcher = page.locator("#answerdesk-paylane-launcher")
            launcher.wait_for()
            assert launcher.get_attribute("aria-expanded") == "false"
            assert launcher.get_attribute("aria-controls") == "answerdesk-paylane-panel"
            launcher.focus()
            page.keyboard.press("Enter")  # keyboard alone opens it
            panel = page.locator("#answerdesk-paylane-panel")
            assert panel.is_visible() and launcher.get_attribute("aria-expanded") == "true"
            assert panel.get_attribute("role") == "dialog"
            frame = _chat_frame(page)
            wait_until(frame, "window.htmx !== undefined && document.getElementById('conversation-id').value")
            wait_until(frame, "document.activeElement && document.activeElement.id === 'question'")
            # One header (the panel's bar) and one Close, in the host page and the frame together.
            assert _seen(page.locator("#answerdesk-paylane-panel button")) == ["Close"]
            assert [t for t in _seen(frame.locator("button")) if "Close" in t] == []
            assert _seen(frame.locator("header, h1, .masthead .who")) == []

            page.keyboard.type("What does error PL-4031 mean?")
            page.keyboard.press("Enter")
            frame.locator("#turns .turn .turn-footer").wait_for()
            assert "insufficient funds" in frame.locator("#turns .answer").first.inner_text()
            assert int(frame.inner_text("#source-count")) >= 1
            assert frame.locator("#source-groups .source").count() >= 1
            assert context.cookies() == [], "the embedded chat must work without any cookie"
            assert _seen(frame.locator("header, h1, .masthead .who")) == []  # also with an answer on the page
            frame.locator("#sources-toggle").click()  # the sources sheet open: still one Close
            wait_until(frame, "document.getElementById('sources').classList.contains('is-open')")
            frame.wait_for_timeout(300)
            assert _seen(page.locator("#answerdesk-paylane-panel button")) == ["Close"]
            assert [t for t in _seen(frame.locator("button")) if "Close" in t] == []
            frame.locator("#sources .sources-close").click()
            wait_until(frame, "!document.getElementById('sources').classList.contains('is-open')")
            if os.environ.get("SAVE_SCREENSHOTS") == "1":
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOTS / "widget.png"))

            page.keyboard.press("Escape")  # focus is inside the frame: the chat asks the host to close
            wait_until(page, "document.getElementById('answerdesk-paylane-panel').hidden")
            assert page.evaluate("document.activeElement.id") == "answerdesk-paylane-launcher"
            assert launcher.get_attribute("aria-expanded") == "false"
            launcher.click()
            assert frame.locator("#turns .turn").count() == 1, "closing and reopening keeps the conversation"

            conversation_id = frame.input_value("#conversation-id")
            page.reload()  # the tab remembers the panel was open, and the conversation
            page.locator("#answerdesk-paylane-panel").wait_for(state="visible")
            assert page.locator("#answerdesk-paylane-launcher").get_attribute("aria-expanded") == "true"
            frame = _chat_frame(page)
            frame.locator("#turns .turn .turn-footer").wait_for()
            wait_until(frame, "window.htmx !== undefined")
            assert frame.input_value("#conversation-id") == conversation_id
            assert "insufficient funds" in frame.locator("#turns .answer").first.inner_text()
            assert int(frame.inner_text("#source-count")) >= 1
            follow_up = frame.locator("#question")
            follow_up.fill("and how do I fix it?")
            follow_up.press("Enter")
            frame.locator("#turns .turn .turn-footer").nth(1).wait_for()
            assert frame.locator("#turns .turn").count() == 2
            assert context.cookies() == []
        finally:
            context.close()


def test_an_origin_not_on_the_list_gets_a_notice_naming_it_and_never_the_chat(
        live_url: str, paylane_embeddable: Any, chromium: Any) -> None:
    with host_site(HOST_PAGE.format(server=live_url)) as allowed, host_site(
            HOST_PAGE.format(server=live_url)) as other:
        paylane_embeddable(allowed)
        policy = httpx.get(f"{live_url}/t/paylane/embed/").headers["content-security-policy"]
        assert policy.endswith(f"; frame-ancestors {allowed}") and other not in policy
        context = chromium.new_context(viewport={"width": 1280, "height": 860})
        try:
            page = context.new_page()
            page.set_default_timeout(20_000)
            page.goto(other)
            page.locator("#answerdesk-paylane-launcher").click()
            frame = _chat_frame(page)
            notice = frame.locator("[data-refused-origin]")
            notice.wait_for()
            # The site's owner reads what is wrong and where to fix it, instead of a blank refusal.
            text = notice.inner_text()
            assert other in text and "Embed origins" in text and "not allowed" in text
            assert notice.get_attribute("role") == "alert"
            assert frame.locator("#question").count() == 0, "the chat rendered inside a refused origin"
            assert _seen(page.locator("#answerdesk-paylane-panel button")) == ["Close"]
            page.locator("#answerdesk-paylane-panel button").click()  # and it still closes
            wait_until(page, "document.getElementById('answerdesk-paylane-panel').hidden")
            # A page that claims the allowed origin while it is not gets the chat's policy: the
            # browser still refuses to frame the chat there (the claim chooses only the notice).
            claimed = httpx.get(f"{live_url}/t/paylane/embed/", params={"origin": allowed},
                                headers={"Referer": f"{other}/"})
            assert claimed.status_code == 200 and claimed.headers["content-security-policy"].endswith(
                f"; frame-ancestors {allowed}")
        finally:
            context.close()
