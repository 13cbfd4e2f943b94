"""The `llm` reranker wired to the provider chain, against the fake provider (a real local server)."""

from __future__ import annotations

import json

import pytest
from pytest_django import Settings

from answering.providers import ProviderConfig, build_provider
from answering.providers.chain import ProviderChain, SpendCapReached, Tally, metering
from answering.pipeline.relevance import llm_relevance
from answering.tests.fake_provider import fake_provider
from retrieval.rerankers.llm import LlmPointwiseReranker


def metered_chain(url: str) -> ProviderChain:
    return ProviderChain([build_provider(ProviderConfig("openai", f"{url}/v1", "FAKE_OPENAI_KEY", "gpt-4o-mini", 5))]
                         ).metered(Tally())


def grade(value: object) -> tuple[str, str]:
    return ("ok", json.dumps({"relevance": value}))


def test_llm_reranker_orders_by_the_models_grades(provider_keys: None) -> None:
    with fake_provider() as (url, script):
        chain = metered_chain(url)
        script.openai.extend([grade(10), grade(95), grade(60)])
        reranker = LlmPointwiseReranker(scorer=lambda q, t: llm_relevance(q, t, chain=chain))
        scores = reranker.score("how do refunds work", ["about webhooks", "refunds take 5 days", "refund fees"])
        sent = [r["body"] for r in script.requests]
    assert [round(s.probability, 2) for s in scores] == [0.1, 0.95, 0.6]
    assert scores[1].logit > scores[2].logit > scores[0].logit
    assert all(body["temperature"] == 0 for body in sent)
    assert "refunds take 5 days" in sent[1]["messages"][-1]["content"]


def test_unusable_grades_are_neutral_never_a_crash(provider_keys: None) -> None:
    with fake_provider() as (url, script):
        chain = metered_chain(url)
        script.openai.extend([("ok", "not json"), grade("high"), ("status", (500, None, "boom")), ("status", (500, None, "boom"))])
        values = [llm_relevance("q", "t", chain=chain) for _ in range(3)]
    assert values == [0.5, 0.5, 0.5]


@pytest.mark.parametrize("value, expected", [(-5, 0.0), (250, 1.0), ("70", 0.7)])
def test_grades_are_clamped_to_a_probability(provider_keys: None, value: object, expected: float) -> None:
    with fake_provider() as (url, script):
        chain = metered_chain(url)
        script.openai.append(grade(value))
        assert llm_relevance("q", "t", chain=chain) == pytest.approx(expected)


class Refusing(Tally):
    def admit(self, *, stage: str) -> None:
        raise SpendCapReached(f"over the cap ({stage})")


def test_the_scorer_bills_the_lent_meter_and_sends_nothing_without_one_or_past_the_cap(
        provider_keys: None, settings: Settings) -> None:
    """Retrieval reaches the scorer by a dotted path, with no chain of ours: it uses the
    settings' chain and bills whatever meter the pipeline lent around retrieval."""
    with fake_provider() as (url, script):
        settings.ANSWER_PROVIDERS = f"openai|{url}/v1|FAKE_OPENAI_KEY|gpt-4o-mini|5"
        script.openai.extend([grade(80), grade(80)])
        assert llm_relevance("q", "t") == 0.5  # nobody lent a meter: not sent
        tally = Tally()
        with metering(tally):
            assert llm_relevance("q", "t") == pytest.approx(0.8)
        with metering(Refusing()):
            assert [llm_relevance("q", "t") for _ in range(20)] == [0.5] * 20
        sent = len(script.requests)
    assert sent == 1 and tally.stages["relevance"].calls == 1 and tally.stages["relevance"].cost_usd > 0
