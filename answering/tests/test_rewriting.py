from __future__ import annotations

import pytest

from answering.providers import build_provider, ProviderConfig
from answering.providers.chain import ProviderChain
from answering.rewriting import rewrite_query, validate_rewrite
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
        chain = ProviderChain([build_provider(ProviderConfig("openai", f"{url}/v1", "FAKE_OPENAI_KEY", "m", 5))])
        script.openai.append(("ok", "webhook retry exponential backoff schedule"))
        good = rewrite_query("What about the backoff?", HISTORY, chain)
        script.openai.append(("ok", "Yes, the backoff doubles each time."))
        bad = rewrite_query("What about the backoff?", HISTORY, chain)
    assert good.method == "model" and good.query == "webhook retry exponential backoff schedule"
    assert bad.method == "fallback" and bad.query == "What about the backoff?"
    sent = script.requests[0]["body"]
    assert sent["temperature"] == 0.0
    assert len(sent["messages"]) == 1 and "<conversation>" in sent["messages"][0]["content"]
