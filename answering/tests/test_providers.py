"""Both wire dialects against a real local HTTP server: streaming, errors, failover."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from django.test import override_settings

from answering.providers import (Completion, ErrorKind, Message, ProviderConfig, ProviderError, build_provider,
                                 parse_provider_configs)
from answering.providers.chain import AllProvidersFailed, ProviderChain, SpendCapReached, Tally
from answering.providers.sse import iter_events
from answering.tests.fake_provider import fake_provider

ANSWER = '{"answer": "Refunds take 14 days [1].", "citations": [1], "declined": false}'
MESSAGES = [Message("system", "rules"), Message("user", "question")]


@pytest.fixture(autouse=True)
def api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test-openai")
    monkeypatch.setenv("FAKE_GEMINI_KEY", "gm-test")


def openai(url: str, timeout: float = 5.0, model: str = "gpt-4o-mini") -> ProviderConfig:
    return ProviderConfig("openai", f"{url}/v1", "FAKE_OPENAI_KEY", model, timeout)


def gemini(url: str, timeout: float = 5.0) -> ProviderConfig:
    return ProviderConfig("gemini", f"{url}/v1beta", "FAKE_GEMINI_KEY", "gemini-2.0-flash", timeout)


def test_sse_parser_handles_comments_multiline_and_missing_final_blank() -> None:
    events = list(iter_events([": keep-alive", "event: token", "data: a", "data: b", "", "data: c"]))
    assert [(e.event, e.data) for e in events] == [("token", "a\nb"), ("message", "c")]


@pytest.mark.parametrize("config", [openai, gemini])
def test_streamed_answer_tokens_usage_and_cost(config: Callable[..., ProviderConfig]) -> None:
    with fake_provider() as (url, script):
        getattr(script, config.__name__).append(("ok", ANSWER))
        provider = build_provider(config(url))
        items = list(provider.stream(MESSAGES, temperature=0.0, max_tokens=200, json_output=True))
    *deltas, completion = items
    texts = [d for d in deltas if isinstance(d, str)]
    assert isinstance(completion, Completion) and texts == deltas
    assert "".join(texts) == ANSWER and completion.text == ANSWER
    assert completion.input_tokens > 0 and completion.output_tokens > 0
    assert completion.cost_usd > 0 and completion.priced
    request = script.requests[0]
    if config is openai:
        assert request["headers"]["Authorization"] == "Bearer sk-test-openai"
        assert request["body"]["temperature"] == 0.0 and request["body"]["stream"] is True
        assert request["body"]["messages"][0] == {"role": "system", "content": "rules"}
    else:
        assert request["headers"]["x-goog-api-key"] == "gm-test"
        assert request["body"]["systemInstruction"]["parts"][0]["text"] == "rules"


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        (("status", (401, None, '{"error": "bad key"}')), ErrorKind.AUTH),
        (("status", (429, 1, '{"error": "slow down"}')), ErrorKind.RATE_LIMITED),
        (("status", (429, 3600, '{"error": "slow down"}')), ErrorKind.QUOTA_EXHAUSTED),
        (("status", (429, None, '{"error": {"code": "insufficient_quota"}}')), ErrorKind.QUOTA_EXHAUSTED),
        (("status", (503, None, "overloaded")), ErrorKind.OVERLOADED),
        (("malformed", None), ErrorKind.BAD_RESPONSE),
        (("cut", ANSWER), ErrorKind.BAD_RESPONSE),
        (("hang", (2.0, ANSWER)), ErrorKind.TIMEOUT),  # sleeps past the client's timeout
    ],
)
@pytest.mark.parametrize("config", [openai, gemini])
def test_error_taxonomy(config: Callable[..., ProviderConfig], behaviour: tuple[str, object], kind: ErrorKind) -> None:
    with fake_provider() as (url, script):
        getattr(script, config.__name__).append(behaviour)
        provider = build_provider(config(url, timeout=0.5))
        with pytest.raises(ProviderError) as raised:
            list(provider.stream(MESSAGES, temperature=0.0, max_tokens=50, json_output=False))
    assert raised.value.kind is kind, raised.value


def test_chain_fails_over_and_records_the_attempt() -> None:
    with fake_provider() as (url, script):
        script.openai.append(("status", (503, None, "down")))
        script.gemini.append(("ok", ANSWER))
        chain = ProviderChain([build_provider(openai(url)), build_provider(gemini(url))]).metered(Tally())
        completion = chain.complete(MESSAGES)
    assert completion.text == ANSWER and completion.model == "gemini-2.0-flash"
    assert [a["kind"] for a in completion.attempts] == ["overloaded"]


def test_a_provider_whose_key_variable_is_empty_fails_over_without_a_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    with fake_provider() as (url, script):
        script.gemini.append(("ok", ANSWER))
        chain = ProviderChain([build_provider(openai(url)), build_provider(gemini(url))]).metered(Tally())
        completion = chain.complete(MESSAGES)
    assert completion.model == "gemini-2.0-flash" and len(script.requests) == 1
    [attempt] = completion.attempts
    assert attempt["kind"] == "auth" and "FAKE_OPENAI_KEY, which is empty" in str(attempt["error"])


def test_short_retry_after_is_honoured_on_the_same_provider() -> None:
    with fake_provider() as (url, script), override_settings(ANSWER_MAX_RETRY_WAIT=2.0):
        script.openai.extend([("status", (429, 1, "{}")), ("ok", ANSWER)])
        started = time.monotonic()
        completion = ProviderChain([build_provider(openai(url))]).metered(Tally()).complete(MESSAGES)
    assert completion.text == ANSWER and time.monotonic() - started >= 1.0
    assert len(script.requests) == 2


def test_long_retry_after_fails_over_at_once() -> None:
    with fake_provider() as (url, script), override_settings(ANSWER_MAX_RETRY_WAIT=2.0):
        script.openai.append(("status", (429, 120, "{}")))
        script.gemini.append(("ok", ANSWER))
        started = time.monotonic()
        completion = ProviderChain([build_provider(openai(url)), build_provider(gemini(url))]).metered(
            Tally()).complete(MESSAGES)
    assert time.monotonic() - started < 1.5
    assert completion.attempts[0]["kind"] == "quota_exhausted"


def test_every_provider_down_raises_all_failed() -> None:
    with fake_provider() as (url, script):
        script.openai.append(("status", (503, None, "down")))
        script.gemini.append(("cut", ANSWER))
        with pytest.raises(AllProvidersFailed) as raised:
            ProviderChain([build_provider(openai(url)), build_provider(gemini(url))]).metered(Tally()).complete(
                MESSAGES)
    assert [a["kind"] for a in raised.value.attempts] == ["overloaded", "bad_response"]


def test_provider_config_errors_are_clear() -> None:
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="dialect\\|base_url"):
        parse_provider_configs("openai|http://x")
    [config] = parse_provider_configs("gemini|http://x/v1beta/|GEM_KEY|gemini-2.0-flash|7")
    assert config.base_url == "http://x/v1beta" and config.timeout == 7.0


def test_contextual_blurbs_come_from_one_call_per_document(tmp_path: object) -> None:
    from answering.pipeline.contextualize import contextualize
    from corpus.parsers import ParsedDocument, Section

    document = ParsedDocument(slug="a", title="Refunds", source_type="doc", fingerprint="x", source_path="a.md",
                              sections=[Section(("Refunds",), "Refunds take 14 days.")])
    with fake_provider() as (url, script):
        script.openai.append(("ok", '{"blurbs": ["About refund timing."]}'))
        chain = ProviderChain([build_provider(openai(url))]).metered(Tally())
        assert contextualize(document=document, chunks=["Refunds\n\nRefunds take 14 days.", "x"], chain=chain) == [
            "About refund timing.", ""]
        script.openai.append(("ok", "not json"))
        assert contextualize(document=document, chunks=["c"], chain=chain) == [""]
    assert len(script.requests) == 2  # one call per document


class RefuseAfter(Tally):
    """A meter that admits `n` requests, then refuses; it records what it is told."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.left, self.admitted = n, 0

    def admit(self, *, stage: str) -> None:
        if self.left <= 0:
            raise SpendCapReached("cap reached in the test")
        self.left -= 1
        self.admitted += 1


def test_the_meter_is_asked_before_every_request_retries_and_failover_included() -> None:
    with fake_provider() as (url, script), override_settings(ANSWER_MAX_RETRY_WAIT=2.0):
        script.openai.extend([("status", (429, 0, "{}")), ("status", (503, None, "down"))])
        meter = RefuseAfter(2)
        chain = ProviderChain([build_provider(openai(url)), build_provider(gemini(url))]).metered(meter, stage="judge")
        with pytest.raises(SpendCapReached) as refused:
            chain.complete(MESSAGES)
    # Two requests left (the 429 and its retry); the failover to the second provider was refused unsent.
    assert len(script.requests) == 2 and meter.admitted == 2
    assert [a["kind"] for a in refused.value.attempts] == ["rate_limited", "overloaded", "spend_cap"]
    assert isinstance(refused.value, AllProvidersFailed)  # callers that cope with no provider cope with this


@pytest.mark.parametrize("config", [openai, gemini])
def test_a_stream_that_breaks_after_reporting_usage_is_still_billed(config: Callable[..., ProviderConfig]) -> None:
    with fake_provider() as (url, script):
        getattr(script, config.__name__).extend([("unfinished", ANSWER), ("ok", ANSWER)])
        tally = Tally()
        chain = ProviderChain([build_provider(config(url))]).metered(tally, stage="rewrite")
        with pytest.raises(AllProvidersFailed):
            chain.complete(MESSAGES)
        assert tally.stages["rewrite"].calls == 1 and tally.stages["rewrite"].cost_usd > 0
        chain.complete(MESSAGES, stage="relevance")  # a call may name its own stage
    assert tally.stages["relevance"].calls == 1 and tally.total().calls == 2
    assert tally.total().input_tokens == 2 * tally.stages["rewrite"].input_tokens > 0
