"""The chat page in the asker's language (docs/decisions/0050): the Czech demo tenant asked in
Czech from a Czech browser, in headless Chromium against uvicorn, plus the rule that picks the
language and the catalogue that holds it. The server is another process; see test_chat_browser."""

from __future__ import annotations

import gettext
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import translation

from answering.chat.language import CHOICE_COOKIE
from answering.pipeline.greetings import greeting_reply
from answering.tests.test_chat_browser import off_loop
from config.liveserver import browser_page, wait_until

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "locale" / "cs" / "LC_MESSAGES"
_ENTRY = re.compile(r'^msgid "(.*)"\nmsgstr "(.*)"$', re.MULTILINE)


@pytest.fixture
def czech_page(chromium: Any, live_url: str, request: pytest.FixtureRequest, django_db_blocker: Any) -> Iterator[Any]:
    off_loop(django_db_blocker, lambda: request.getfixturevalue("demo_corpus"))
    # An English browser (Accept-Language: en-US): a Czech help centre still speaks Czech (issue 48).
    with browser_page(chromium, locale="en-US") as page:
        yield page


def test_a_czech_asker_reads_czech_and_gets_a_cited_answer(czech_page: Any, live_url: str) -> None:
    page = czech_page
    page.goto(f"{live_url}/t/tlapka/")
    wait_until(page, "window.htmx !== undefined && document.getElementById('conversation-id').value !== ''")
    assert page.locator("html").get_attribute("lang") == "cs"
    assert page.locator("label[for=question]").inner_text() == "Váš dotaz"
    assert page.locator("#ask button[type=submit]").inner_text() == "Zeptat se"
    page.fill("#question", "Kolik se připlácí za dobírku?")
    page.press("#question", "Enter")
    turn = page.locator("#turns .turn").first
    turn.locator(".turn-footer").wait_for(timeout=120_000)  # a cold server loads the models and the lemmas first
    assert turn.locator(".answer a.marker").count() >= 1, turn.inner_text()
    assert "dobírku" in turn.locator(".answer").inner_text()
    group = page.locator("#source-groups .source-group").first
    # The group is headed by its question (issue 48), the hidden lead-in translated.
    assert group.locator(".source-group-question").text_content() == "Zdroje k dotazu: Kolik se připlácí za dobírku?"
    assert "Platební metody" in group.locator(".source-title").all_inner_texts()
    assert turn.locator(".feedback legend").inner_text() == "Pomohla vám tato odpověď?"
    if os.environ.get("SAVE_SCREENSHOTS") == "1":
        page.screenshot(path=str(ROOT / "docs" / "screenshots" / "chat-czech.png"))
    # A string the script writes (chat.js), translated in the page it reads it from: a stream
    # that fails (a 502 from a proxy) ends the turn with the Czech message.
    page.route("**/stream?**", lambda route: route.fulfill(status=502))
    page.fill("#question", "Kolik stojí doprava?")
    page.press("#question", "Enter")
    failed = page.locator("#turns .turn-failed")
    failed.wait_for()
    assert failed.inner_text() == "Odpověď se nepodařilo načíst. Zeptejte se prosím znovu."
    page.click(".language-switch a[lang=en]")  # the visitor's choice, remembered for tlapka's pages
    wait_until(page, "document.querySelector('label[for=question]').innerText === 'Your question'")
    page.goto(f"{live_url}/t/tlapka/")
    assert page.locator("label[for=question]").inner_text() == "Your question"


@pytest.mark.django_db
@pytest.mark.parametrize("tenant, accept, label", [
    ("tlapka", "", "Váš dotaz"),  # no preference: the tenant's language
    ("tlapka", "de-DE,de;q=0.9", "Váš dotaz"),
    ("tlapka", "en-US,en;q=0.9", "Váš dotaz"),  # an English browser on a Czech help centre: Czech
    ("paylane", "de-DE", "Your question"),
    ("paylane", "cs-CZ,cs;q=0.9,en;q=0.8", "Your question"),
])
def test_the_page_speaks_the_tenants_language_whatever_the_browser_asks(demo_corpus: Any, tenant: str, accept: str,
                                                                       label: str) -> None:
    """Issue 48 item 6: the tenant's language wins on its own chat page (Accept-Language read
    first was red here: the English browser got English labels around Czech answers)."""
    response = Client().get(f"/t/{tenant}/", HTTP_ACCEPT_LANGUAGE=accept)
    assert response.status_code == 200
    assert f'<label for="question">{label}</label>' in response.content.decode()
    assert response["Content-Language"] == ("cs" if label == "Váš dotaz" else "en")


@pytest.mark.django_db
def test_the_visitors_choice_wins_and_is_remembered_on_that_tenants_pages_only(demo_corpus: Any) -> None:
    visitor = Client(HTTP_ACCEPT_LANGUAGE="cs-CZ")
    page = visitor.get("/t/tlapka/").content.decode()
    switch = page[page.index('<nav class="language-switch"'):page.index("</nav>")]  # each named in itself
    assert '<a href="?lang=cs" lang="cs" hreflang="cs" aria-current="true">česky</a>' in switch
    assert '<a href="?lang=en" lang="en" hreflang="en">English</a>' in switch
    chosen = visitor.get("/t/tlapka/?lang=en")
    assert '<label for="question">Your question</label>' in chosen.content.decode()
    cookie = chosen.cookies[CHOICE_COOKIE]
    assert cookie.value == "en" and cookie["path"] == "/t/tlapka/" and cookie["httponly"]
    # Remembered without the parameter; the other tenant's pages do not read it (the cookie's
    # path, which the test client honours, and a request there names no choice).
    assert '<label for="question">Your question</label>' in visitor.get("/t/tlapka/").content.decode()
    assert visitor.get("/t/paylane/")["Content-Language"] == "en"
    assert visitor.get("/t/tlapka/?lang=cs")["Content-Language"] == "cs"
    # A language without a catalogue is no choice: the tenant's, and no cookie.
    stranger = Client()
    refused = stranger.get("/t/tlapka/?lang=de")
    assert refused["Content-Language"] == "cs" and CHOICE_COOKIE not in refused.cookies


def test_greetings_and_the_abstention_in_czech() -> None:
    with translation.override("cs"):
        assert greeting_reply("Dobrý den") == "Dobrý den! Zeptejte se na cokoli o našich produktech a službách, " \
                                              "odpovím podle naší dokumentace."
        assert (greeting_reply("Děkuji moc!") or "").startswith("Není zač")
        assert translation.gettext("I don't know the answer to that from our documentation; a person from our "
                                   "team will follow up.").startswith("Odpověď na tento dotaz")
    with translation.override("en"):
        assert (greeting_reply("Dobrý den") or "").startswith("Hello!")  # English where English is active
    assert greeting_reply("Dobrý den, kolik stojí doprava?") is None  # a question, not small talk


def test_the_compiled_catalogue_is_the_committed_source_and_covers_the_page() -> None:
    """django.mo is committed (nothing compiles at run time): it must say what django.po says,
    and every string the chat page marks for translation must have a Czech entry."""
    source = dict(_ENTRY.findall((CATALOGUE / "django.po").read_text(encoding="utf-8")))
    source.pop("", None)
    with (CATALOGUE / "django.mo").open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    assert {msgid: compiled.gettext(msgid.replace('\\"', '"')) for msgid in source} == {
        msgid: text.replace('\\"', '"') for msgid, text in source.items()}
    for template in ("page.html", "followup.html"):
        page = (ROOT / "templates" / "chat" / template).read_text(encoding="utf-8")
        marked = set(re.findall(r'{% translate "([^"]+)" %}', page))
        marked |= {re.sub(r"{{ (\w+) }}", r"%(\1)s", m)
                   for m in re.findall(r"{% blocktranslate[^%]*%}(.*?){% endblocktranslate %}", page)}
        assert marked and marked - set(source) == set(), template
