"""Every provider call is paid for: the daily counter, the cap before each call, the bypass.

The fake provider is a real HTTP server on loopback (answering/tests/fake_provider.py); it
reports 120 prompt and 30 completion tokens a call, which the price table turns into
0.000036 USD for gpt-4o-mini. Requests are counted on the server side: a call the cap
refused must never reach it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection

from answering.providers import spend
from answering.models import Trace
from answering.pipeline.flow import answer
from answering.providers import Message, ProviderConfig, build_provider
from answering.providers.chain import ProviderChain, SpendCapReached, Tally, UnmeteredCall, Usage
from answering.tests.fake_provider import Script, fake_provider
from retrieval.rerankers import get_reranker
from tenants import actions
from tenants.models import Tenant
from tenants.rls import tenant_context

CALL_COST = Decimal("0.000036")  # (120 x 0.15 + 30 x 0.60) / 1e6
HISTORY = [
    {"role": "user", "content": "How do refunds work for card payments?"},
    {"role": "assistant", "content": "Refunds go back to the original card [1]."},
    {"role": "user", "content": "How long does a refund take to arrive?"},
    {"role": "assistant", "content": "Usually five to ten business days [2]."},
    {"role": "user", "content": "Can I refund part of a payment?"},
    {"role": "assistant", "content": "Yes, partial refunds are supported [3]."},
]


def chain_for(url: str) -> ProviderChain:
    return ProviderChain([build_provider(ProviderConfig("openai", f"{url}/v1", "FAKE_OPENAI_KEY", "gpt-4o-mini", 5))])


def stage_of(request: dict[str, Any]) -> str:
    text = " ".join(m["content"] for m in request["body"]["messages"])
    if "Rewrite the customer's last message" in text:
        return "rewrite"
    if "Grade how well the passage" in text:
        return "relevance"
    return "generate"


@pytest.fixture
def llm_everywhere(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Script]]:
    """Rewriting, the `llm` reranker (one call per candidate) and generation, all on the fake provider."""
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    settings.CACHE_ENABLED = False
    settings.RETRIEVAL_RERANKER = "llm"
    settings.RETRIEVAL_RERANK_MODE = "always"
    settings.RETRIEVAL_LLM_SCORER = "answering.pipeline.relevance.llm_relevance"
    get_reranker.cache_clear()
    with fake_provider() as (url, script):
        settings.ANSWER_PROVIDERS = f"openai|{url}/v1|FAKE_OPENAI_KEY|gpt-4o-mini|5"
        yield url, script
    get_reranker.cache_clear()


def test_rewrite_and_relevance_are_counted_and_the_cap_stops_every_call(
        paylane: Tenant, llm_everywhere: tuple[str, Script]) -> None:
    """The bypass: long history, gibberish questions, rewriting and LLM relevance scoring.
    Before the fix only generation reached the cap's sum, so the provider kept being called."""
    _, script = llm_everywhere
    Tenant.objects.filter(pk=paylane.pk).update(daily_spend_cap_usd=Decimal("0.0003"))
    paylane.refresh_from_db()
    before = spend.spend_today_usd(tenant=paylane)
    assert before == 0
    results, sent_after = [], []
    for n in range(4):
        script.openai.append(("ok", "how long does a refund take"))  # the rewrite's reply; the rest get "{}"
        results.append(answer(tenant=paylane, audiences=["public"], question=f"blorf zzkq wibble vorp {n}",
                              history=HISTORY, conversation_id="spend-bypass"))
        sent_after.append(len(script.requests))
    stages = [stage_of(r) for r in script.requests]
    assert "rewrite" in stages and "relevance" in stages, stages
    spent = spend.spend_today_usd(tenant=paylane)
    # Every request that reached the provider is on the counter, whatever stage sent it.
    assert spent == CALL_COST * len(script.requests), (spent, len(script.requests), stages)
    # Checked before each call: the last one admitted started below the cap.
    assert Decimal("0.0003") <= spent < Decimal("0.0003") + CALL_COST
    assert spend.over_daily_cap(tenant=paylane)
    # Once the cap was reached not one more request reached the provider, and answers still came back.
    capped_at = next(i for i, count in enumerate(sent_after) if count * CALL_COST >= Decimal("0.0003"))
    assert sent_after[capped_at:] == [sent_after[capped_at]] * (len(sent_after) - capped_at), sent_after
    assert all(r.action in ("answered", "escalated") and r.text for r in results)
    assert results[-1].generator == "extractive" or results[-1].action == "escalated"
    by_stage = spend.usage_today(tenant=paylane).by_stage
    assert by_stage["rewrite"]["calls"] == stages.count("rewrite")
    assert by_stage["relevance"]["calls"] == stages.count("relevance")
    # The trace of the question that spent says so, by stage, and its cost is the sum of them.
    assert results[0].trace_id is not None
    with tenant_context(paylane.id):
        first = Trace.objects.get(pk=results[0].trace_id)
    usage = first.details["usage"]
    assert usage["rewrite"]["calls"] == 1 and usage["relevance"]["calls"] >= 1
    assert usage["relevance"]["refused"] >= 1 or "generate" in usage  # the cap fell inside this question
    assert first.cost_usd == CALL_COST * sum(s["calls"] for s in usage.values())
    assert first.input_tokens == 120 * sum(s["calls"] for s in usage.values())


def test_forced_fail_without_the_check_before_each_call_the_bypass_test_goes_red(
        paylane: Tenant, llm_everywhere: tuple[str, Script], monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard removed on purpose: the meter still counts but no longer refuses. The detector
    above (requests after the cap) must see the provider called past the cap."""
    _, script = llm_everywhere
    monkeypatch.setattr(spend.TenantMeter, "admit", lambda self, *, stage: None)
    monkeypatch.setattr(spend, "over_daily_cap", lambda *, tenant: False)
    Tenant.objects.filter(pk=paylane.pk).update(daily_spend_cap_usd=Decimal("0.0003"))
    paylane.refresh_from_db()
    for n in range(2):
        script.openai.append(("ok", "how long does a refund take"))
        answer(tenant=paylane, audiences=["public"], question=f"blorf zzkq {n}", history=HISTORY)
    spent = spend.spend_today_usd(tenant=paylane)
    assert spent == CALL_COST * len(script.requests)
    assert spent >= Decimal("0.0003") + CALL_COST, "the unguarded run did not overshoot: the bypass test proves nothing"


def test_past_the_cap_generation_falls_back_to_the_extractive_answerer_mid_question(
        paylane: Tenant, llm_everywhere: tuple[str, Script]) -> None:
    """The cap crossed by this question's own rewrite: generation is refused, the extractive answerer answers."""
    _, script = llm_everywhere
    spend.record_spend(tenant=paylane, stage="generate",
                       usage=Usage("earlier", "gpt-4o-mini", 0, 0, float(Decimal("0.0003") - CALL_COST)))
    Tenant.objects.filter(pk=paylane.pk).update(daily_spend_cap_usd=Decimal("0.0003"))
    paylane.refresh_from_db()
    script.openai.append(("ok", "What does error PL-4031 mean?"))
    result = answer(tenant=paylane, audiences=["public"], question="And PL-4031?", history=HISTORY)
    assert [stage_of(r) for r in script.requests] == ["rewrite"]
    assert result.action == "answered" and result.generator == "extractive"
    assert result.trace_id is not None
    with tenant_context(paylane.id):
        trace = Trace.objects.get(pk=result.trace_id)
    assert trace.generator == "extractive" and trace.cost_usd == CALL_COST
    assert trace.details["usage"]["rewrite"]["calls"] == 1 and trace.details["usage"]["relevance"]["refused"] >= 1


def test_trace_costs_are_not_the_counter(paylane: Tenant) -> None:
    """The counter is the one source: a trace row with a cost (a cached answer's, an old one's) adds nothing."""
    from answering.pipeline import records

    before = spend.spend_today_usd(tenant=paylane)
    records.trace_create(tenant=paylane, fields={"action": "answered", "question": "earlier", "cost_usd": 5.0})
    assert spend.spend_today_usd(tenant=paylane) == before
    total = spend.record_spend(tenant=paylane, stage="judge", usage=Usage("p", "m", 10, 2, 0.0000001))
    assert total == before + Decimal("0.0000001")  # nine decimals: sub-micro-dollar calls add up


def test_a_chain_without_a_meter_sends_nothing(provider_keys: None) -> None:
    with fake_provider() as (url, script):
        with pytest.raises(UnmeteredCall):
            chain_for(url).complete([Message("user", "hi")])
        assert chain_for(url).metered(Tally()).complete([Message("user", "hi")]).text == "{}"
    assert len(script.requests) == 1


def test_a_meter_without_a_tenant_refuses(provider_keys: None) -> None:
    with fake_provider() as (url, script):
        with pytest.raises(SpendCapReached, match="needs a tenant"):
            chain_for(url).metered(spend.TenantMeter(tenant=None)).complete([Message("user", "hi")])
    assert script.requests == []


def test_concurrent_calls_overshoot_the_cap_by_at_most_the_calls_in_flight(
        django_db_setup: Any, django_db_blocker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """THREADS threads call as fast as they can. The counter must equal what reached the
    provider (no lost update), and end below cap + THREADS x one call: each thread has at
    most one call in flight, and a call is admitted only while the counter is below the cap."""
    threads_n, cap = 6, CALL_COST * 10 + CALL_COST / 2
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    with django_db_blocker.unblock():
        tenant, _ = actions.tenant_get_or_create(slug="spend-race")
        Tenant.objects.filter(pk=tenant.pk).update(daily_spend_cap_usd=cap)
        tenant.refresh_from_db()
        refusals: list[str] = []
        barrier = threading.Barrier(threads_n)
        with fake_provider() as (url, script):
            def worker() -> None:
                chain = chain_for(url)
                barrier.wait()
                try:
                    for _ in range(10):
                        chain.metered(spend.TenantMeter(tenant=tenant), stage="relevance").complete(
                            [Message("user", "grade")], max_tokens=20)
                except SpendCapReached as exc:
                    refusals.append(str(exc))
                finally:
                    connection.close()

            workers = [threading.Thread(target=worker) for _ in range(threads_n)]
            for thread in workers:
                thread.start()
            for thread in workers:
                thread.join()
            sent = len(script.requests)
        spent = spend.usage_today(tenant=tenant)
        assert spent.cost_usd == CALL_COST * sent and spent.calls == sent
        assert spent.by_stage["relevance"]["calls"] == sent
        assert cap <= spent.cost_usd < cap + threads_n * CALL_COST, (spent.cost_usd, sent)
        assert len(refusals) == threads_n and "daily spend cap" in refusals[0]


def test_the_contextualizer_bills_the_ingesting_tenant_and_stops_at_its_cap(paylane: Tenant,
                                                                            provider_keys: None) -> None:
    from answering.pipeline.contextualize import contextualize
    from corpus.parsers import ParsedDocument, Section

    document = ParsedDocument(slug="a", title="Refunds", source_type="doc", fingerprint="x", source_path="a.md",
                              sections=[Section(("Refunds",), "Refunds take 14 days.")])
    with fake_provider() as (url, script):
        script.openai.append(("ok", '{"blurbs": ["About refund timing."]}'))
        with pytest.raises(UnmeteredCall):  # nobody to bill: nothing sent
            contextualize(document=document, chunks=["c"], chain=chain_for(url))
        before = spend.spend_today_usd(tenant=paylane)
        assert contextualize(document=document, chunks=["c"], tenant=paylane, chain=chain_for(url)) == [
            "About refund timing."]
        assert spend.spend_today_usd(tenant=paylane) == before + CALL_COST
        assert spend.usage_today(tenant=paylane).by_stage["contextualize"]["calls"] == 1
        Tenant.objects.filter(pk=paylane.pk).update(daily_spend_cap_usd=before + CALL_COST)
        paylane.refresh_from_db()
        with pytest.raises(SpendCapReached, match="contextual blurbs for 'Refunds' stopped: .*daily spend cap"):
            contextualize(document=document, chunks=["c"], tenant=paylane, chain=chain_for(url))
    assert len(script.requests) == 1


def test_providers_are_only_ever_called_through_the_metered_chain() -> None:
    """One door: outside the providers package, nothing streams from a provider or posts to one
    except ProviderChain.complete, which refuses to send without a meter."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    doors = ("provider.stream(", "stream_events(", ".stream(messages")
    found = []
    for path in root.rglob("*.py"):
        relative = path.relative_to(root).as_posix()
        if relative.startswith((".venv/", "var/")) or "/tests/" in relative or relative.startswith(
                "answering/providers/"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{relative}: {door}" for door in doors if door in text]
    assert found == []
