"""The chat page on narrow screens (issue 19 item 5): nothing the page offers covers a control.

At 390 px the floating "Sources (n)" button used to sit on the Ask button. Each width asks a
real question against the committed demo corpus, so the check runs with sources counted and
an answer (with its feedback buttons) on the page, not only on the empty page.
"""

from __future__ import annotations

from typing import Any

import pytest

from answering.tests.test_chat_browser import ask, off_loop
from config.liveserver import wait_until

# True when the element at the centre of `el` is `el` or inside it: what a tap there would hit.
HIT = """(el) => {
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return hit !== null && (hit === el || el.contains(hit));
}"""

# Every visible control, scrolled to the middle of the screen, must be what its centre hits;
# returns the ones that are covered, described.
COVERED = """() => {
  const covered = [];
  document.querySelectorAll('button, a[href], input:not([type=hidden]), textarea, summary').forEach((el) => {
    if (el.closest('#sources') || !el.getClientRects().length) return;  // the sheet is checked open, below
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') return;
    if (el.classList.contains('skip-link')) return;  // off screen until focused, by design
    el.scrollIntoView({block: 'center', inline: 'center'});
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!(hit === el || el.contains(hit))) {
      covered.push(`${el.tagName}#${el.id}.${el.className} under ${hit && hit.tagName}#${hit && hit.id}.${hit && hit.className}`);
    }
  });
  return covered;
}"""


@pytest.fixture
def paylane_corpus(live_url: str, django_db_blocker: Any, request: pytest.FixtureRequest) -> Any:
    return off_loop(django_db_blocker, lambda: request.getfixturevalue("demo_corpus"))


@pytest.mark.parametrize("width", [320, 390, 768])
def test_nothing_covers_a_control_and_the_sources_sheet_opens_and_closes(
        width: int, live_url: str, paylane_corpus: Any, chromium: Any) -> None:
    context = chromium.new_context(viewport={"width": width, "height": 740}, has_touch=True, is_mobile=True)
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{live_url}/t/paylane/")
        wait_until(page, "window.htmx !== undefined && document.getElementById('conversation-id').value")
        ask_button = page.locator("#ask .ask-button")
        assert ask_button.evaluate(HIT), f"at {width} px something covers the Ask button on the empty page"
        ask(page, "What does error PL-4031 mean?", 1)
        assert int(page.inner_text("#source-count")) >= 1
        assert page.evaluate(COVERED) == []
        ask_button.scroll_into_view_if_needed()
        assert ask_button.evaluate(HIT), f"at {width} px something covers the Ask button after an answer"

        sheet, toggle = page.locator("#sources"), page.locator("#sources-toggle")
        assert toggle.evaluate(HIT) and not sheet.is_visible()
        toggle.tap()
        wait_until(page, "document.getElementById('sources').classList.contains('is-open')")
        assert sheet.is_visible() and toggle.get_attribute("aria-expanded") == "true"
        close = sheet.locator(".sources-close")
        page.wait_for_timeout(300)  # the sheet slides in; tap where it has come to rest
        assert close.evaluate(HIT)
        close.tap()
        wait_until(page, "!document.getElementById('sources').classList.contains('is-open')")
        page.wait_for_timeout(300)
        assert not sheet.is_visible() and toggle.get_attribute("aria-expanded") == "false"
        assert ask_button.evaluate(HIT)
    finally:
        context.close()
