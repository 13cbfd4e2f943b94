"""The multi-query arm reads its model's JSON through the one fence rule (answering.providers.reply_json)."""

from __future__ import annotations

import json

import pytest

from answering.providers import build_provider, parse_provider_configs
from answering.providers.chain import ProviderChain, Tally
from answering.tests.fake_provider import fake_provider
from evaluation.multiquery import llm_rephraser

QUERIES = json.dumps({"queries": ["PL-4031 error code meaning", "declined with PL-4031"]})


@pytest.mark.parametrize("reply", [QUERIES, f"```json\n{QUERIES}\n```", f"```\n{QUERIES}\n```"],
                         ids=["bare", "json-fence", "plain-fence"])
def test_rephrasings_are_read_through_any_fence(reply: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    with fake_provider() as (url, script):
        script.openai.append(("ok", reply))
        [config] = parse_provider_configs(f"openai|{url}/v1|FAKE_OPENAI_KEY|gpt-4o-mini")
        rephrase = llm_rephraser(ProviderChain([build_provider(config)], meter=Tally()))
        assert rephrase("What does PL-4031 mean?") == ["PL-4031 error code meaning", "declined with PL-4031"]
