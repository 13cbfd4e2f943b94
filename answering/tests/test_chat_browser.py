"""The chat page in headless Chromium against uvicorn (config/liveserver.py) and the committed demo corpus.

The server is another process: everything it reads is committed (the demo corpus), and what
it writes (traces, escalations, feedback) is committed by it, so these tests read it back
through their own connection, inside the tenant's row-level security context. Playwright's
sync API keeps an event loop running on the test's thread, where Django refuses database
calls; the reads run on a short-lived thread of their own (`read_db`), and these tests take
no `django_db` transaction.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from answering.models import Escalation, Trace
from config.liveserver import collect_problems, wait_until
from tenants.models import Tenant
from tenants.rls import tenant_context

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

# Records, in the page, the first moment the sources panel holds a source, the answer holds
# text, and the turn has ended; the assertion is about the order the visitor saw them in.
ORDER_OBSERVER = """(() => {
window.__order = [];
const seen = new Set();
const note = (what) => { if (!seen.has(what)) { seen.add(what); window.__order.push(what); } };
new MutationObserver(() => {
  if (document.querySelector('#source-groups .source')) note('sources');
  const answer = document.querySelector('#turns .answer');
  if (answer && answer.textContent.trim()) note('token');
  if (document.querySelector('#turns .turn-footer')) note('done');
}).observe(document.body, {subtree: true, childList: true, characterData: true});
})()"""


def off_loop(django_db_blocker: Any, work: Callable[[], Any]) -> Any:
    def run() -> Any:
        try:
            with django_db_blocker.unblock():
                return work()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


@pytest.fixture
def read_db(django_db_blocker: Any) -> Callable[[Callable[[], Any]], Any]:
    return lambda query: off_loop(django_db_blocker, query)


@pytest.fixture
def paylane_corpus(request: pytest.FixtureRequest, live_url: str, django_db_blocker: Any) -> Any:
    """The committed demo corpus, loaded once per session but off this thread: a browser test
    of another module may already have started Playwright, after which this thread cannot query."""
    return off_loop(django_db_blocker, lambda: request.getfixturevalue("demo_corpus"))


@pytest.fixture
def problems() -> list[str]:
    """Script errors and failed requests seen by the page; a test that provokes one removes it."""
    return []


@pytest.fixture
def chat(live_url: str, paylane_corpus: Any, page: Any, problems: list[str]) -> Iterator[Any]:
    """The PayLane chat page, loaded; fails the test on any script error or failed request."""
    collect_problems(page, problems)
    page.goto(f"{live_url}/t/paylane/")
    wait_until(page, "window.htmx !== undefined && document.getElementById('conversation-id').value !== ''")
    page.evaluate(ORDER_OBSERVER)
    yield page
    assert problems == []


def ask(page: Any, question: str, turn: int) -> Any:
    """Ask with the keyboard (Enter sends) and wait for the turn's end; returns the turn."""
    page.fill("#question", question)
    page.press("#question", "Enter")
    page.locator("#turns .turn .turn-footer").nth(turn - 1).wait_for()
    return page.locator("#turns .turn").nth(turn - 1)


def paylane_trace(read_db: Callable[[Callable[[], Any]], Any], trace_id: int) -> Trace:
    def query() -> Trace:
        paylane = Tenant.objects.get(slug="paylane")
        with tenant_context(paylane.id):
            return Trace.objects.get(pk=trace_id)

    return read_db(query)


def test_sources_fill_before_the_first_answer_token_and_a_marker_opens_its_source(chat: Any) -> None:
    streams: list[str] = []
    chat.on("request", lambda request: streams.append(request.url) if "/stream?" in request.url else None)
    turn = ask(chat, "What does error PL-4031 mean?", 1)
    assert chat.evaluate("window.__order") == ["sources", "token", "done"]
    chat.wait_for_timeout(3500)  # longer than EventSource's reconnection delay
    assert len(streams) == 1, "the page must close the stream on `done`, or the browser asks again"
    assert "insufficient funds" in turn.locator(".answer").inner_text()
    assert chat.locator("#sources").is_visible() and chat.locator("#source-groups .source").count() >= 1
    assert turn.locator(".answer").get_attribute("aria-live") == "polite"
    assert turn.locator(".answer").get_attribute("aria-busy") == "false"
    marker = turn.locator("a.marker").first
    target = marker.get_attribute("data-source")
    marker.click()
    source = chat.locator(f"#{target}")
    assert source.get_attribute("open") is not None
    assert source.locator(".source-snippet").is_visible() and source.locator(".source-path").is_visible()
    assert chat.evaluate("document.activeElement.closest('details')?.id") == target
    if os.environ.get("SAVE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        chat.screenshot(path=str(SCREENSHOTS / "chat.png"))


def test_follow_up_sends_the_earlier_turns(chat: Any, read_db: Any) -> None:
    ask(chat, "What does error PL-4031 mean?", 1)
    second = ask(chat, "and how do I fix it?", 2)
    assert chat.locator("#turns .turn").count() == 2  # the earlier turn stays in the page
    conversation_id = chat.input_value("#conversation-id")
    trace = paylane_trace(read_db, int(second.locator(".turn-footer").get_attribute("data-trace")))
    assert trace.conversation_id.endswith(f":{conversation_id}") and len(conversation_id) >= 32
    assert trace.history_turns == 2 and "PL-4031" in trace.rewritten_query


def test_feedback_with_a_comment_is_recorded_on_the_trace(chat: Any, read_db: Any) -> None:
    turn = ask(chat, "How many times are failed webhooks retried?", 1)
    trace_id = int(turn.locator(".turn-footer").get_attribute("data-trace"))
    turn.get_by_label("Comment (optional)").fill("the retry count was what I needed")
    turn.get_by_role("button", name="Helpful", exact=True).click()
    turn.locator(".feedback-thanks").wait_for()
    trace = paylane_trace(read_db, trace_id)
    assert trace.feedback == 1 and trace.feedback_comment == "the retry count was what I needed"


def test_an_abstention_shows_the_escalation_notice(chat: Any, read_db: Any) -> None:
    turn = ask(chat, "What is the capital of Mongolia?", 1)
    notice = turn.locator(".escalation-notice")
    assert notice.is_visible() and "support team" in notice.inner_text()
    assert chat.locator("#source-groups .source").count() == 0
    trace = paylane_trace(read_db, int(turn.locator(".turn-footer").get_attribute("data-trace")))

    def query() -> Escalation:
        with tenant_context(trace.tenant_id):
            return Escalation.objects.get(trace_id=trace.pk)

    escalation = read_db(query)
    link = notice.locator("a.followup-link")
    assert link.get_attribute("href").endswith(f"/f/{escalation.public_id}/") and escalation.status == "open"
    assert f"E-{escalation.pk}" not in notice.inner_text()


def test_on_a_phone_the_sources_are_a_sheet_that_a_marker_tap_opens(live_url: str, paylane_corpus: Any,
                                                                   chromium: Any) -> None:
    context = chromium.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{live_url}/t/paylane/")
        sheet, toggle = page.locator("#sources"), page.locator("#sources-toggle")
        assert toggle.is_visible() and not sheet.is_visible()
        turn = ask(page, "What does error PL-4031 mean?", 1)
        assert int(page.inner_text("#source-count")) >= 1 and not sheet.is_visible()
        marker = turn.locator("a.marker").first
        marker.tap()
        source = page.locator(f"#{marker.get_attribute('data-source')}")
        wait_until(page, "document.getElementById('sources').classList.contains('is-open')")
        assert sheet.is_visible() and toggle.get_attribute("aria-expanded") == "true"
        assert source.get_attribute("open") is not None and source.is_visible()
        page.keyboard.press("Escape")
        wait_until(page, "!document.getElementById('sources').classList.contains('is-open')")
        assert page.evaluate("document.activeElement.id") == "sources-toggle"
        toggle.tap()
        wait_until(page, "document.getElementById('sources').classList.contains('is-open')")
        assert sheet.is_visible()
    finally:
        context.close()


def test_keyboard_alone_asks_and_reaches_the_sources(chat: Any) -> None:
    chat.keyboard.press("Tab")
    assert chat.evaluate("document.activeElement.className") == "skip-link"
    chat.keyboard.press("Enter")
    assert chat.evaluate("document.activeElement.id") == "question"
    chat.keyboard.type("What does error PL-4031 mean?")
    chat.keyboard.press("Enter")
    chat.locator("#turns .turn-footer").wait_for()
    assert chat.evaluate("document.activeElement.id") == "question"  # ready for the next question
    for _ in range(10):  # back from the question box into the answer, to its first marker
        chat.keyboard.press("Shift+Tab")
        if chat.evaluate("document.activeElement.classList.contains('marker')"):
            break
    else:
        pytest.fail("no citation marker is reachable with the keyboard")
    target = chat.evaluate("document.activeElement.dataset.source")
    chat.keyboard.press("Enter")
    assert chat.locator(f"#{target}").get_attribute("open") is not None
    assert chat.evaluate("document.activeElement.tagName") == "SUMMARY"


def test_a_rejected_question_shows_a_notice_under_the_form(chat: Any, problems: list[str]) -> None:
    chat.fill("#question", "   ")  # passes the browser's `required`, not the server
    chat.press("#question", "Enter")
    notice = chat.locator("#ask-notice .notice")
    notice.wait_for()
    assert "type a question" in notice.inner_text() and chat.locator("#turns .turn").count() == 0
    expected = [p for p in problems if "400" in p]
    assert any("/t/paylane/ask" in p for p in expected)
    problems[:] = [p for p in problems if p not in expected]


def test_a_stream_that_fails_ends_the_turn_instead_of_asking_again(chat: Any, problems: list[str]) -> None:
    streams: list[str] = []

    def fail(route: Any) -> None:
        streams.append(route.request.url)
        route.fulfill(status=502)

    chat.route("**/stream?**", fail)
    chat.fill("#question", "What does error PL-4031 mean?")
    chat.press("#question", "Enter")
    failed = chat.locator("#turns .turn-failed")
    failed.wait_for()
    assert "ask again" in failed.inner_text()
    chat.wait_for_timeout(2500)  # the extension's first retry would come after 0.5-1 s
    assert len(streams) == 1
    problems[:] = [p for p in problems if "502" not in p and "[object Event]" not in p]

