"""In Chromium, the chat, follow-up and embed pages work under their strict
Content-Security-Policy (answering/chat/policy.py) and the browser reports no violation: a
question answered, an abstention's email left, the follow-up page's message sent, the
embedded chat answering inside a host page. Every `securitypolicyviolation` event, in every
frame, and every console line naming the policy is collected; the forced-fail test plants an
inline script and an inline style and sees both reported."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from answering.tests.test_chat_browser import paylane_corpus  # noqa: F401 (fixture)
from answering.tests.test_embed_browser import HOST_PAGE, host_site, paylane_embeddable  # noqa: F401 (fixture)
from config.liveserver import wait_until

# Runs in every frame before the page's own scripts; reports each violation to the test.
REPORTER = """document.addEventListener('securitypolicyviolation', (e) => {
  window.reportCspViolation(`${location.pathname}: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`
                            + ` (${e.sourceFile}:${e.lineNumber})`);
}, true);"""


class Watched:
    """A browser context whose pages report policy violations, script errors and failed requests."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.violations: list[str] = []
        self.problems: list[str] = []
        context.expose_function("reportCspViolation", self._report)
        context.add_init_script(REPORTER)

    def _report(self, text: str) -> None:
        self.violations.append(text)

    def page(self) -> Any:
        page = self.context.new_page()
        page.set_default_timeout(60_000)  # the first answer of the session loads the model
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("response", lambda r: self.problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        return page

    def _console(self, message: Any) -> None:
        if "Content Security Policy" in message.text:
            self.violations.append(f"console: {message.text}")
        elif message.type == "error":
            self.problems.append(f"console: {message.text}")


@pytest.fixture
def watched(chromium: Any) -> Iterator[Watched]:
    context = chromium.new_context(viewport={"width": 1280, "height": 860})
    try:
        yield Watched(context)
    finally:
        context.close()


def _ask(page: Any, question: str, turn: int) -> Any:
    page.fill("#question", question)
    page.press("#question", "Enter")
    page.locator("#turns .turn .turn-footer").nth(turn - 1).wait_for()
    return page.locator("#turns .turn").nth(turn - 1)


def test_the_chat_and_follow_up_pages_work_and_report_no_violation(live_url: str, paylane_corpus: Any,  # noqa: F811
                                                                   watched: Watched) -> None:
    page = watched.page()
    page.goto(f"{live_url}/t/paylane/")
    wait_until(page, "window.htmx !== undefined && document.getElementById('conversation-id').value !== ''")
    turn = _ask(page, "What does error PL-4031 mean?", 1)
    assert "insufficient funds" in turn.locator(".answer").inner_text()
    marker = turn.locator("a.marker").first
    marker.click()  # chat.js opens the cited source
    assert page.locator(f"#{marker.get_attribute('data-source')}").get_attribute("open") is not None

    page.goto(f"{live_url}/t/paylane/")  # the conversation is restored (issue 48); a new one, for an abstention
    wait_until(page, "window.htmx !== undefined && document.getElementById('conversation-id').value !== ''")
    assert page.locator("#turns .turn").count() == 1
    page.get_by_role("button", name="New conversation").click()
    notice = _ask(page, "What is the capital of Mongolia?", 1).locator(".escalation-notice")
    expect(notice).to_contain_text("support team")
    notice.get_by_label("Your email (optional): we'll reply here and by email").fill("cara@example.com")
    notice.get_by_role("button", name="Send me the reply").click()
    expect(notice.locator(".followup-contact-result")).to_contain_text("we will also reply by email")

    notice.locator("a.followup-link").click()
    page.wait_for_url("**/t/paylane/f/*/")
    wait_until(page, "window.htmx !== undefined")
    page.fill("#message-body", "It is for a customer in Ulaanbaatar.")
    page.get_by_role("button", name="Send", exact=True).click()
    expect(page.locator("#thread .messages")).to_contain_text("Ulaanbaatar")
    expect(page.locator("#thread")).to_contain_text("Sent. We will reply here.")
    assert watched.violations == [] and watched.problems == []


def test_the_embedded_chat_works_and_reports_no_violation(live_url: str, paylane_embeddable: Any,  # noqa: F811
                                                          watched: Watched) -> None:
    with host_site(HOST_PAGE.format(server=live_url)) as host:
        paylane_embeddable(host)
        page = watched.page()
        page.goto(host)
        page.locator("#answerdesk-paylane-launcher").click()
        frame = page.frame_locator("#answerdesk-paylane-panel iframe")
        frame.locator("#question").fill("What does error PL-4031 mean?")
        frame.locator("#question").press("Enter")
        frame.locator("#turns .turn .turn-footer").wait_for()
        assert "insufficient funds" in frame.locator("#turns .answer").first.inner_text()
        assert frame.locator("#source-groups .source").count() >= 1
    assert watched.violations == [] and watched.problems == []


def test_forced_fail_an_inline_script_and_style_are_blocked_and_reported(live_url: str,
                                                                        paylane_corpus: Any,  # noqa: F811
                                                                        watched: Watched) -> None:
    page = watched.page()
    page.goto(f"{live_url}/t/paylane/")
    wait_until(page, "window.htmx !== undefined")
    page.evaluate("""() => {
        const script = document.createElement('script');
        script.textContent = 'window.plantedRan = true';
        document.head.appendChild(script);
        document.getElementById('turns').setAttribute('style', 'color: red');
    }""")
    page.wait_for_timeout(500)
    assert page.evaluate("window.plantedRan === undefined"), "the planted inline script ran"
    reported = " | ".join(watched.violations)
    assert "script-src" in reported and "style-src" in reported, watched.violations
    assert any(v.startswith("console: ") for v in watched.violations), "no console line named the policy"
