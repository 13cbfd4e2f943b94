"""The follow-up page in the asker's language (issue 22 item 4): the same rule as the chat page
(answering/chat/language.py), the page's labels and the notices its forms return."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from answering.tests.console_data import escalation_make

pytestmark = pytest.mark.django_db


def test_a_visitor_who_chose_czech_reads_the_follow_up_page_in_czech(acme: Any) -> None:
    mine = escalation_make(acme.tenant, "Kde je můj balík?")
    url = f"/t/acme/f/{mine.public_id}/"
    czech = Client(HTTP_ACCEPT_LANGUAGE="cs-CZ,cs;q=0.9")
    assert czech.get(url)["Content-Language"] == "en"  # acme's language, whatever the browser asks
    czech.get("/t/acme/?lang=cs")  # the chat page's switch: remembered on acme's pages
    page = czech.get(url)
    assert page["Content-Language"] == "cs"
    html = page.content.decode()
    assert '<html lang="cs">' in html and "Přidat zprávu" in html and "čeká na náš tým" in html
    assert "Uschovejte si adresu této stránky" in html and "Add a message" not in html
    sent = czech.post(url + "message", {"body": "Měl přijít v pondělí."}).content.decode()
    assert "Odesláno. Odpovíme zde." in sent
    assert "Děkujeme, odpovíme také e-mailem." in czech.post(url + "contact", {"email": "bo@example.com"}).content.decode()


def test_an_english_browser_reads_it_in_english(acme: Any) -> None:
    mine = escalation_make(acme.tenant, "Where is my parcel?")
    html = Client(HTTP_ACCEPT_LANGUAGE="en-US").get(f"/t/acme/f/{mine.public_id}/").content.decode()
    assert '<html lang="en">' in html and "Add a message" in html and "waiting for our team" in html
