"""A member chooses the console's language (issue 49 item 4, docs/decisions/0110): the switch
beside the member's links stores it in the language cookie, which wins over the browser's."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client

pytestmark = pytest.mark.django_db


def _signed_in(user: Any, accept: str) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=accept)
    client.force_login(user)
    return client


def test_a_member_who_chose_czech_reads_the_console_in_czech_whatever_the_browser(acme: Any) -> None:
    member = _signed_in(acme.owner, "en-US,en;q=0.9")
    index = member.get("/admin/").content.decode()
    assert '<html lang="en"' in index and 'name="language"' in index and "Console language" in index
    chosen = member.post("/i18n/setlang/", {"language": "cs", "next": "/admin/"})
    assert chosen.status_code == 302 and chosen["Location"] == "/admin/"
    assert chosen.cookies[settings.LANGUAGE_COOKIE_NAME].value == "cs"
    page = member.get("/admin/").content.decode()
    assert '<html lang="cs"' in page and "Jazyk konzole" in page
    assert '<option value="cs" lang="cs" selected>česky</option>' in page
    member.post("/i18n/setlang/", {"language": "en", "next": "/admin/"})
    assert '<html lang="en"' in member.get("/admin/").content.decode()


def test_a_language_the_console_lacks_and_a_foreign_next_change_nothing(acme: Any) -> None:
    member = _signed_in(acme.owner, "en-US")
    member.post("/i18n/setlang/", {"language": "de", "next": "/admin/"})
    # Django stores any language it has a catalogue for; the console reads only settings.LANGUAGES.
    assert '<html lang="en"' in member.get("/admin/").content.decode()
    away = member.post("/i18n/setlang/", {"language": "cs", "next": "https://evil.example/"})
    assert away["Location"] == "/"  # Django's set_language keeps the redirect on this site


def test_the_chat_page_does_not_follow_the_consoles_choice(acme: Any) -> None:
    member = _signed_in(acme.owner, "en-US")
    member.post("/i18n/setlang/", {"language": "cs", "next": "/admin/"})
    assert member.get("/t/acme/")["Content-Language"] == "en"  # acme's language (0109)
