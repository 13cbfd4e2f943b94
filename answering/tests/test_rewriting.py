from __future__ import annotations

import pytest

from answering.providers import build_provider, ProviderConfig
from answering.providers.chain import ProviderChain, SpendCapReached, Tally
from answering.pipeline.rewriting import rewrite_query, validate_rewrite
from answering.tests.fake_provider import fake_provider

HISTORY = [{"role": "user", "content": "How do webhook retries work?"},
           {"role": "assistant", "content": "Failed deliveries are retried with exponential backoff [1]."}]


def test_first_turn_is_not_rewritten() -> None:
    assert rewrite_query("What about the backoff?", [], None).method == "none"


def test_offline_follow_up_is_joined_to_the_last_user_turn() -> None:
    rewrite = rewrite_query("What about the backoff?", HISTORY, None)
    assert rewrite.method == "offline" and rewrite.query == "How do webhook retries work? What about the backoff?"
    standalone = rewrite_query("How do I export invoices as CSV files for accounting?", HISTORY, None)
    assert standalone.method == "none"


@pytest.mark.parametrize(("output", "problem"), [
    ("", "empty"), ("Yes, retries use exponential backoff.", "answered"), ("x" * 400, "overlong"),
])
def test_rewrite_validation(output: str, problem: str) -> None:
    assert problem in (validate_rewrite(output, "What about the backoff?") or "")


def test_model_rewrite_sees_history_as_data_and_falls_back_on_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "k")
    with fake_provider() as (url, script):
        chain = ProviderChain([build_provider(ProviderConfig("openai", f"{url}/v1", "FAKE_OPENAI_KEY", "m", 5))]
                              ).metered(Tally())
        script.openai.append(("ok", "webhook retry exponential backoff schedule"))
        good = rewrite_query("What about the backoff?", HISTORY, chain)
        script.openai.append(("ok", "Yes, the backoff doubles each time."))
        bad = rewrite_query("What about the backoff?", HISTORY, chain)
    assert good.method == "model" and good.query == "webhook retry exponential backoff schedule"
    assert bad.method == "fallback" and bad.query == "What about the backoff?"
    sent = script.requests[0]["body"]
    assert sent["temperature"] == 0.0
    assert len(sent["messages"]) == 1 and "<conversation>" in sent["messages"][0]["content"]


class Refusing(Tally):
    def admit(self, *, stage: str) -> None:
        raise SpendCapReached(f"over the cap ({stage})")


def test_rewrites_are_billed_as_their_own_stage_and_past_the_cap_fall_back_to_offline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "k")
    with fake_provider() as (url, script):
        base = ProviderChain([build_provider(ProviderConfig("openai", f"{url}/v1", "FAKE_OPENAI_KEY", "gpt-4o-mini", 5))])
        tally = Tally()
        script.openai.append(("ok", "webhook retry exponential backoff schedule"))
        rewrite_query("What about the backoff?", HISTORY, base.metered(tally))  # the chain's own stage: generate
        refused = rewrite_query("What about the backoff?", HISTORY, base.metered(Refusing()))
    assert list(tally.stages) == ["rewrite"] and tally.stages["rewrite"].cost_usd > 0
    # Refused before sending: the offline join, exactly as with no provider at all.
    assert len(script.requests) == 1
    assert refused.method == "offline" and refused.query == "How do webhook retries work? What about the backoff?"
