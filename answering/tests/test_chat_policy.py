"""The chat, follow-up and embed pages send a strict Content-Security-Policy (no inline
script, no inline style, nothing from elsewhere), one header merged with the embed's
frame-ancestors; their templates hold nothing such a policy would block. The browser half,
the pages working under it with no violation reported, is test_chat_policy_browser.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from answering.tests.console_data import escalation_make
from conftest import Cast
from tenants.models import Tenant

STRICT = {
    "default-src": "'self'", "script-src": "'self'", "style-src": "'self'", "img-src": "'self' data:",
    "connect-src": "'self'", "base-uri": "'none'", "form-action": "'self'", "object-src": "'none'",
}
TEMPLATES = Path(settings.BASE_DIR) / "templates" / "chat"
# What a strict policy refuses in markup: an inline script, an inline handler (htmx's hx-on is
# one, run through eval), a javascript: URL, an inline style element or attribute.
INLINE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=|\bhx-on\b|javascript:|<style\b|\sstyle\s*=",
                    re.IGNORECASE)


def policy(response: Any) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    directives = [d.strip().split(None, 1) for d in header.split(";") if d.strip()]
    names = [d[0] for d in directives]
    assert len(names) == len(set(names)), f"a directive twice: {header}"
    return {d[0]: d[1] if len(d) > 1 else "" for d in directives}


def assert_strict(response: Any) -> dict[str, str]:
    assert response.status_code in (200, 403), response.status_code
    found = policy(response)
    for name, value in STRICT.items():
        assert found.get(name) == value, (name, found)
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response["Content-Security-Policy"]
    return found


@pytest.mark.django_db
def test_the_chat_and_follow_up_pages_send_the_strict_policy(client: Client, acme: Cast) -> None:
    assert_strict(client.get("/t/acme/"))
    escalation = escalation_make(acme.tenant, "Can I pay with gift cards?")
    assert_strict(client.get(f"/t/acme/f/{escalation.public_id}/"))


@pytest.mark.django_db
def test_the_embed_page_merges_frame_ancestors_into_the_one_header(client: Client, acme: Cast) -> None:
    Tenant.objects.filter(pk=acme.tenant.pk).update(embed_origins="https://help.acme.test", embed_secret="s")
    page = client.get("/t/acme/embed/")
    assert assert_strict(page)["frame-ancestors"] == "https://help.acme.test"
    refused = client.get("/t/acme/embed/", {"token": "acme|customer|1|forged"})
    assert refused.status_code == 403 and assert_strict(refused)["frame-ancestors"] == "https://help.acme.test"


def test_the_page_templates_hold_nothing_the_policy_blocks() -> None:
    for template in sorted(TEMPLATES.glob("*.html")):
        hits = [m.group(0) for m in INLINE.finditer(template.read_text(encoding="utf-8"))]
        assert hits == [], f"{template.name}: {hits}"


def test_the_template_scan_catches_an_inline_handler(tmp_path: Path) -> None:
    """Forced fail of the scan above: each planted line is found."""
    planted = ['<button onclick="go()">', "<script>alert(1)</script>", '<a href="javascript:go()">',
               '<div hx-on:click="go()">', '<p style="color:red">', "<style>p{}</style>"]
    assert [bool(INLINE.search(line)) for line in planted] == [True] * len(planted)
    assert not INLINE.search('<script src="/static/x.js" defer></script><p class="x" data-onclick="1">')
