"""Rate limits per key and per client address, and the daily spend cap, through /api/v1."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from answering.providers import spend
from answering.providers.chain import Usage
from answering.tests.fake_provider import fake_provider
from answering.tests.test_api import QUESTION, error_code, issue, post
from tenants.models import Tenant


@pytest.fixture
def paylane(demo_corpus: Any, db: Any) -> Tenant:
    return Tenant.objects.get(slug="paylane")


def until_refused(send: Any, limit: int) -> list[Any]:
    """Requests until the first 429. A fixed window may turn between two requests, so allow
    one reset: a limit of n is refused by request 2n + 1 at the latest."""
    responses = []
    for _ in range(2 * limit + 1):
        responses.append(send())
        if responses[-1].status_code == 429:
            break
    statuses = [r.status_code for r in responses]
    assert statuses[-1] == 429 and set(statuses[:-1]) == {200}, statuses
    assert len(statuses) - 1 in (limit, 2 * limit), statuses
    return responses


def test_a_key_over_its_own_limit_gets_429_with_retry_after(paylane: Tenant, client: Client) -> None:
    limited, other = issue("paylane", rate_limit_per_minute=2), issue("paylane")
    refused = until_refused(lambda: post(client, "/ask", {"question": "hello"}, limited), 2)[-1]
    assert error_code(refused) == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 60
    # Another key of the same tenant, from the same address, is not starved by it.
    assert post(client, "/ask", {"question": "hello"}, other).status_code == 200


def test_the_per_key_setting_applies_when_the_key_has_no_limit(paylane: Tenant, client: Client,
                                                              settings: Any) -> None:
    settings.API_RATE_LIMIT_PER_KEY = 1
    key = issue("paylane")
    until_refused(lambda: post(client, "/ask", {"question": "hello"}, key), 1)


def test_an_address_over_its_limit_gets_429_even_with_fresh_keys_or_none(paylane: Tenant, client: Client,
                                                                         settings: Any) -> None:
    settings.API_RATE_LIMIT_PER_ADDRESS = 3
    address = {"REMOTE_ADDR": "198.51.100.77"}
    until_refused(lambda: post(client, "/ask", {"question": "hello"}, issue("paylane"), **address), 3)
    for key in (issue("paylane"), None, "ad_000000000000.guess"):
        refused = post(client, "/ask", {"question": "hello"}, key, **address)
        assert refused.status_code == 429 and error_code(refused) == "rate_limited" and refused["Retry-After"]
    # Key guessing from that address is slowed down too, and other addresses are unaffected.
    assert post(client, "/ask", {"question": "hello"}, issue("paylane"), REMOTE_ADDR="198.51.100.78").status_code == 200


def _spend(tenant: Tenant, usd: float) -> None:
    # Spend is the daily counter every provider call adds to (answering/providers/spend.py), not a sum of traces.
    spend.record_spend(tenant=tenant, stage="generate", usage=Usage("earlier", "gpt-4o-mini", 0, 0, usd))


@pytest.fixture
def fake_llm(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    settings.CACHE_ENABLED = False  # a cached extractive answer would hide which generator ran
    with fake_provider() as (url, script):
        settings.ANSWER_PROVIDERS = f"openai|{url}/v1|FAKE_OPENAI_KEY|gpt-4o-mini|5"
        answer = json.dumps({"answer": "PL-4031 means the card had insufficient funds [1].", "citations": [1],
                             "declined": False})
        script.openai.extend([("ok", answer), ("ok", answer)])
        yield script


def test_under_the_cap_the_model_answers(paylane: Tenant, client: Client, fake_llm: Any) -> None:
    Tenant.objects.filter(pk=paylane.pk).update(daily_spend_cap_usd=Decimal("5"))
    _spend(paylane, 0.01)
    body = post(client, "/ask", {"question": QUESTION}, issue("paylane")).json()
    assert body["action"] == "answered" and "insufficient funds [1]" in body["answer"]
    assert len([r for r in fake_llm.requests if r["path"].endswith("/chat/completions")]) >= 1


def test_past_the_daily_cap_the_extractive_answerer_answers(paylane: Tenant, client: Client, fake_llm: Any) -> None:
    Tenant.objects.filter(pk=paylane.pk).update(daily_spend_cap_usd=Decimal("0.000010"))
    _spend(paylane, 0.02)
    paylane.refresh_from_db()
    assert spend.over_daily_cap(tenant=paylane)
    body = post(client, "/ask", {"question": QUESTION}, issue("paylane")).json()
    assert body["action"] == "answered" and body["sources"][0]["slug"] == "api/errors"
    assert fake_llm.requests == []  # not one call to the configured provider, rewriting included
    from answering.models import Trace
    from tenants.rls import tenant_context

    with tenant_context(paylane.id):
        assert Trace.objects.get(pk=body["trace_id"]).generator == "extractive"


def test_the_setting_is_the_cap_of_tenants_without_their_own(paylane: Tenant, settings: Any) -> None:
    settings.ANSWER_DAILY_SPEND_CAP_USD = 0.5
    Tenant.objects.filter(pk=paylane.pk).update(daily_spend_cap_usd=None)
    paylane.refresh_from_db()
    before = spend.spend_today_usd(tenant=paylane)
    assert spend.daily_cap_usd(tenant=paylane) == Decimal("0.5")
    _spend(paylane, 0.5 - float(before) + 0.01)
    assert spend.over_daily_cap(tenant=paylane)
