"""The answer-mode page (issue 48 item 5): each tenant a member sees, extractive or which
providers and models, and why; never another tenant's row."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from answering.providers import spend
from answering.providers.chain import Usage
from answering.tests.console_data import staff_client
from tenants.models import Tenant

pytestmark = pytest.mark.django_db
PAGE = "/admin/answering/trace/answer-mode/"
CHAIN = ("openai|http://127.0.0.1:11434/v1|LOCAL_KEY|llama3.1:8b|60,"
         "openai|https://api.openai.com/v1|OPENAI_KEY_FOR_THE_PAGE|gpt-4o-mini")


def row(html: str, slug: str) -> str:
    start = html.find(f'<tr id="mode-{slug}">')
    assert start >= 0, f"no row for {slug}"
    return html[start:html.index("</tr>", start)]


def test_without_a_provider_every_row_says_extractive_and_how_to_connect(acme: Any, settings: Any) -> None:
    settings.ANSWER_PROVIDERS = ""
    response = staff_client(acme.agent).get(PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    assert "extractive (offline, no model)" in row(html, "acme") and "ANSWER_PROVIDERS is empty" in row(html, "acme")
    assert 'href="#connect"' in html and 'id="connect"' in html
    assert "openai|http://127.0.0.1:11434/v1" in html and "check_provider" in html and "docs/models.md" in html
    assert 'href="/admin/answering/trace/answer-mode/"' in staff_client(acme.agent).get("/admin/").content.decode()


def test_with_a_chain_each_row_names_providers_and_models_and_the_cap_turns_it_extractive(
        acme: Any, globex: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.ANSWER_PROVIDERS = CHAIN
    monkeypatch.setenv("LOCAL_KEY", "none")
    monkeypatch.delenv("OPENAI_KEY_FOR_THE_PAGE", raising=False)
    Tenant.objects.filter(pk=globex.tenant.pk).update(daily_spend_cap_usd=Decimal("0.001"))
    globex.tenant.refresh_from_db()
    spend.record_spend(tenant=globex.tenant, stage="generate", usage=Usage("p", "gpt-4o-mini", 1, 1, 0.002))
    root = get_user_model().objects.create_superuser("mode-root", password="pw")
    html = staff_client(root).get(PAGE).content.decode()
    mine = row(html, "acme")
    assert "<strong>model</strong>" in mine
    assert mine.index("llama3.1:8b") < mine.index("gpt-4o-mini")  # in the chain's order
    assert "via openai at 127.0.0.1" in mine and "via openai at api.openai.com" in mine
    # The operator sees which key variable is missing: every call through that entry would fail.
    assert "<code>LOCAL_KEY</code>: set" in mine
    assert "<code>OPENAI_KEY_FOR_THE_PAGE</code>: <strong class=\"key-missing\">not set" in mine
    capped = row(html, "globex")
    assert "extractive (offline, no model)" in capped and "reached the daily cap" in capped
    assert "1 provider call, 0.002000 of 0.001000 USD" in capped
    # A member who is not a superuser reads the chain, not the machine's addresses or key variables.
    agent_html = staff_client(acme.agent).get(PAGE).content.decode()
    agent_row = row(agent_html, "acme")
    assert "llama3.1:8b" in agent_row and "LOCAL_KEY" not in agent_row and "11434" not in agent_row
    assert "key-missing" not in agent_html


def test_a_member_sees_only_their_tenants_rows(acme: Any, globex: Any, settings: Any) -> None:
    settings.ANSWER_PROVIDERS = ""
    html = staff_client(acme.agent).get(PAGE).content.decode()
    assert 'id="mode-acme"' in html and 'id="mode-globex"' not in html and "globex" not in html
    # Staff with every console permission and no membership: no row of any tenant.
    outsider = staff_client(acme.outsider).get(PAGE)
    assert outsider.status_code == 200
    assert 'id="mode-' not in outsider.content.decode() and "member of no tenant" in outsider.content.decode()


def test_the_page_needs_the_trace_view_permission(acme: Any) -> None:
    assert staff_client(acme.agent, "view_escalation").get(PAGE).status_code == 403
