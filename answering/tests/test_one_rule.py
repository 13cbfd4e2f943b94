"""One of each where there were copies, and the rule each copy now follows.

- SSE framing: one encoder for the API and the chat page; a line break in the data must not cut it.
- SSE response: paced under ASGI, the plain generator when a WSGI server iterates it.
- A model's JSON reply: one reader for every prompt, through a bare "```" fence too.
- History: the chat page keeps a turn up to the question limit, like the API and the pipeline.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from answering.chat.pending import pending_ask_claim
from answering.pipeline.contextualize import contextualize
from answering.pipeline.limits import MAX_QUESTION_CHARS
from answering.pipeline.relevance import llm_relevance
from answering.providers import ProviderConfig, build_provider, reply_json
from answering.providers.chain import ProviderChain, Tally
from answering.providers.sse import Event, iter_events
from answering.sse import EventStreamResponse, sse
from answering.tests.chat_helpers import ask, stream_url
from answering.tests.fake_provider import fake_provider
from corpus.parsers import ParsedDocument, Section

FENCES = ['{"relevance": 80}', '```json\n{"relevance": 80}\n```', '```\n{"relevance": 80}\n```',
          '  ```json{"relevance": 80}```  ']


def test_an_event_with_line_breaks_reaches_the_client_whole() -> None:
    """The API's encoder wrote a string's line break into one `data:` line, which ends the field there."""
    html = '<ol class="sources">\r\n<li>Refunds</li>\n</ol>'
    wire = sse(html, event="sources") + sse({"text": "a\nb"}, event="token") + sse("[DONE]")
    assert list(iter_events(wire.decode().split("\n"))) == [
        Event(data='<ol class="sources">\n<li>Refunds</li>\n</ol>', event="sources"),
        Event(data='{"text": "a\\nb"}', event="token"), Event(data="[DONE]")]


def test_a_wsgi_server_gets_each_event_before_the_next_is_made() -> None:
    """The chat's response was always asynchronous: a WSGI server made Django drain it into a list first."""
    pulled: list[int] = []

    def events() -> Iterator[bytes]:
        for n in range(3):
            pulled.append(n)
            yield sse({"n": n})

    response = EventStreamResponse(events())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Django warns when it has to drain an asynchronous stream
        first = next(iter(response))
    assert first == b'data: {"n": 0}\n\n' and pulled == [0]
    assert response.is_async and response["Cache-Control"] == "no-cache"  # ASGI gets the paced stream


@pytest.mark.parametrize("reply", FENCES)
def test_every_model_json_reply_is_read_through_a_fence(reply: str) -> None:
    assert reply_json(reply) == {"relevance": 80}


def test_relevance_and_blurbs_read_a_bare_fence(provider_keys: None) -> None:
    """relevance.py stripped only "```json", contextualize.py no fence at all: both lost good replies."""
    document = ParsedDocument(slug="a", title="Refunds", source_type="doc", fingerprint="x", source_path="a.md",
                              sections=[Section(("Refunds",), "Refunds take 14 days.")])
    with fake_provider() as (url, script):
        chain = ProviderChain([build_provider(ProviderConfig("openai", f"{url}/v1", "FAKE_OPENAI_KEY", "gpt-4o-mini",
                                                             5))]).metered(Tally())
        script.openai.extend([("ok", FENCES[2]), ("ok", '```\n{"blurbs": ["About refund timing."]}\n```')])
        assert llm_relevance("q", "t", chain=chain) == pytest.approx(0.8)
        assert contextualize(document=document, chunks=["Refunds take 14 days."], chain=chain) == [
            "About refund timing."]


@pytest.mark.django_db
def test_the_chat_keeps_a_history_turn_up_to_the_question_limit(client: Client, demo_corpus: Any) -> None:
    """The chat cut each turn to 1,500 characters, the API and the pipeline at the question limit."""
    from tenants.models import Tenant

    paylane = Tenant.objects.get(slug="paylane")
    long_turn = "refund " * 500  # 3,500 characters
    history = [{"role": "user", "content": long_turn.strip()}, {"role": "assistant", "content": "x" * 5000}]
    url = stream_url(ask(client, "paylane", "and for cards?", history=history).content)
    pending = pending_ask_claim(pending_id=url.split("id=", 1)[1], tenant_id=paylane.id, user_id=None)
    assert [len(turn["content"]) for turn in pending.history] == [len(long_turn.strip()), MAX_QUESTION_CHARS]
