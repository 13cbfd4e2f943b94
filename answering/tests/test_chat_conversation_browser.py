"""Issue 48 item 2 in headless Chromium, at 1280 and 390 px: the chat behaves like a chat.

Each new answer scrolls into view above the sticky question box; each turn's sources sit under
its own question; the conversation survives a reload (this tab's sessionStorage) and a question
after the reload is still a follow-up; "talk to a person" is in the answer's footer and comes
forward after a thumbs-down, opening the abstention's escalation with the answer's trace; a
fenced block of an answer shows as code. The server, the corpus and the database reads are
test_chat_browser.py's (uvicorn in another process, the committed demo corpus).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from answering.models import Escalation
from answering.tests.test_chat_browser import SCREENSHOTS, ask, off_loop, paylane_trace
from answering.tests.test_chat_phone import HIT
from config.liveserver import collect_problems, wait_until
from tenants.models import Tenant
from tenants.rls import tenant_context

WIDTHS = {"desktop": {"width": 1280, "height": 860}, "phone": {"width": 390, "height": 844}}

# The newest turn's answer as the visitor sees it: its top on screen, and what is drawn at its
# first line is the answer itself, not the sticky question box (or anything else) over it.
ANSWER_IN_VIEW = """() => {
  const turns = document.querySelectorAll('#turns .turn');
  const answer = turns[turns.length - 1].querySelector('.answer');
  const r = answer.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + Math.min(20, r.width / 2), r.top + 8);
  return {top: Math.round(r.top), askTop: Math.round(document.getElementById('ask').getBoundingClientRect().top),
          drawn: hit !== null && answer.contains(hit), scrolled: Math.round(window.scrollY)};
}"""


@pytest.fixture(params=sorted(WIDTHS))
def screen(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def paylane_corpus(live_url: str, django_db_blocker: Any, request: pytest.FixtureRequest) -> Any:
    return off_loop(django_db_blocker, lambda: request.getfixturevalue("demo_corpus"))


@pytest.fixture
def chat_at(screen: str, live_url: str, paylane_corpus: Any, chromium: Any) -> Iterator[Any]:
    """PayLane's chat page in a fresh context (own storage) at the screen's size; fails the
    test on any script error (the strict CSP's refusals among them) or failed request."""
    problems: list[str] = []
    phone = screen == "phone"
    context = chromium.new_context(viewport=WIDTHS[screen], has_touch=phone, is_mobile=phone)
    page = context.new_page()
    page.set_default_timeout(20_000)
    collect_problems(page, problems)
    page.goto(f"{live_url}/t/paylane/")
    wait_until(page, "window.htmx !== undefined && document.getElementById('conversation-id').value !== ''")
    try:
        yield page
    finally:
        context.close()
    assert problems == []


def _loaded(page: Any) -> None:
    wait_until(page, "window.htmx !== undefined && document.getElementById('conversation-id').value !== ''")


def test_each_new_answer_scrolls_into_view_above_the_question_box(chat_at: Any, screen: str) -> None:
    for number, question in enumerate(("What does error PL-4031 mean?", "How many times are failed webhooks retried?",
                                       "How long are idempotency keys remembered?", "What does error PL-4031 mean?"),
                                      start=1):
        ask(chat_at, question, number)
        chat_at.wait_for_timeout(100)  # the settle after `done`
        seen = chat_at.evaluate(ANSWER_IN_VIEW)
        assert seen["drawn"] and 0 <= seen["top"] < seen["askTop"], f"turn {number} at {screen}: {seen}"
    assert seen["scrolled"] > 0, "four answers should not fit one screen; the check proved nothing"


def test_each_turns_sources_are_grouped_under_its_question(chat_at: Any, screen: str) -> None:
    questions = ["What does error PL-4031 mean?", "How many times are failed webhooks retried?"]
    for number, question in enumerate(questions, start=1):
        ask(chat_at, question, number)
    if screen == "phone":
        chat_at.locator("#sources-toggle").tap()
        wait_until(chat_at, "document.getElementById('sources').classList.contains('is-open')")
    groups = chat_at.locator("#source-groups .source-group")
    assert groups.count() == 2
    # Newest first, each headed by its own question and holding its own sources.
    headings = [groups.nth(i).locator(".source-group-question").inner_text() for i in range(2)]
    assert [h.replace("\n", " ") for h in headings] == [f"Sources for: {q}" for q in reversed(questions)]
    assert all(groups.nth(i).locator(".source").count() >= 1 for i in range(2))
    assert groups.nth(0).get_attribute("aria-labelledby") == groups.nth(0).locator("h3").get_attribute("id")
    assert "Cited in this answer" not in chat_at.inner_text("#sources")
    assert groups.nth(0).locator(".source-group-question").is_visible()


def test_the_conversation_survives_a_reload_and_a_follow_up_stays_a_follow_up(chat_at: Any, screen: str,
                                                                              read_db: Any) -> None:
    first = ask(chat_at, "What does error PL-4031 mean?", 1)
    chat_at.wait_for_timeout(100)  # the settle after `done`: htmx's passing classes are gone
    answer_html = first.locator(".answer").inner_html()
    conversation_id = chat_at.input_value("#conversation-id")
    chat_at.reload()
    _loaded(chat_at)
    restored = chat_at.locator("#turns .turn")
    assert restored.count() == 1 and restored.first.locator(".answer").inner_html() == answer_html
    assert chat_at.input_value("#conversation-id") == conversation_id
    assert chat_at.evaluate("document.activeElement === document.body || document.activeElement.id === 'question'")
    assert chat_at.locator("#source-groups .source-group .source-group-question").text_content().endswith(
        "What does error PL-4031 mean?")
    assert int(chat_at.inner_text("#source-count")) >= 1
    marker = restored.first.locator("a.marker").first  # the restored answer still opens its sources
    target = marker.get_attribute("data-source")
    marker.tap() if screen == "phone" else marker.click()
    assert chat_at.locator(f"#{target}").get_attribute("open") is not None
    if screen == "phone":
        chat_at.keyboard.press("Escape")
        wait_until(chat_at, "!document.getElementById('sources').classList.contains('is-open')")

    second = ask(chat_at, "and how do I fix it?", 2)
    trace = paylane_trace(read_db, int(second.locator(".turn-footer").get_attribute("data-trace")))
    assert trace.history_turns == 2 and "PL-4031" in trace.rewritten_query, "after a reload it is still a follow-up"
    assert trace.conversation_id.endswith(f":{conversation_id}")

    chat_at.locator("#new-conversation").click()
    assert chat_at.locator("#turns .turn").count() == 0 and chat_at.locator("#source-groups .source-group").count() == 0
    assert chat_at.input_value("#conversation-id") != conversation_id
    assert not chat_at.locator("#new-conversation").is_visible()
    chat_at.reload()
    _loaded(chat_at)
    assert chat_at.locator("#turns .turn").count() == 0, "a new conversation stays new after a reload"


def test_a_thumbs_down_offers_a_person_who_gets_the_answers_trace(chat_at: Any, screen: str, read_db: Any) -> None:
    turn = ask(chat_at, "How many times are failed webhooks retried?", 1)
    trace_id = int(turn.locator(".turn-footer").get_attribute("data-trace"))
    assert turn.locator(".person-button").is_visible()  # in the answer's footer from the start
    turn.get_by_role("button", name="Not helpful").click()
    offer = turn.locator(".person-offer")
    offer.wait_for()
    assert "Not what you needed" in offer.inner_text() and turn.locator(".person").count() == 1
    chat_at.wait_for_timeout(100)  # the settle
    assert offer.locator("button").evaluate(HIT), f"at {screen} the offer of a person is under something"
    assert chat_at.evaluate("document.activeElement.classList.contains('feedback-thanks')")
    offer.get_by_role("button", name="Talk to a person").click()
    notice = turn.locator(".escalation-notice")
    notice.wait_for()
    assert "support team" in notice.inner_text() and notice.get_by_label("Your email (optional)").is_visible()

    def query() -> Escalation:
        paylane = Tenant.objects.get(slug="paylane")
        with tenant_context(paylane.id):
            return Escalation.objects.get(trace_id=trace_id)

    escalation = read_db(query)
    assert escalation.reason == Escalation.Reason.ASKER_REQUEST and escalation.status == "open"
    assert notice.locator("a.followup-link").get_attribute("href").endswith(f"/f/{escalation.public_id}/")
    assert paylane_trace(read_db, trace_id).feedback == -1


def test_a_fenced_block_in_an_answer_shows_as_code(chat_at: Any, screen: str) -> None:
    ask(chat_at, "What does error PL-4031 mean?", 1)
    turn = ask(chat_at, "How do I send an idempotency key with curl?", 2)
    answer = turn.locator(".answer")
    code = answer.locator("pre.code code")
    assert code.count() >= 1 and code.first.is_visible()
    assert "curl https://api.paylane.example/v2/charges" in code.first.inner_text()
    assert "```" not in answer.inner_text()
    assert "monospace" in code.first.evaluate("el => getComputedStyle(el).fontFamily")
    # Wider than a phone, the listing scrolls inside its block instead of widening the page.
    assert chat_at.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    if os.environ.get("SAVE_SCREENSHOTS") == "1":
        turn.get_by_role("button", name="Not helpful").click()
        turn.locator(".person-offer").wait_for()
        chat_at.wait_for_timeout(100)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        chat_at.screenshot(path=str(SCREENSHOTS / f"chat-{screen}.png"))


@pytest.fixture
def read_db(django_db_blocker: Any) -> Callable[[Callable[[], Any]], Any]:
    return lambda query: off_loop(django_db_blocker, query)
