"""The answer cache: never the wrong answer, never stale, never an abstention, honest costs."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from answering.models import Trace
from answering.pipeline import answer
from cachelayer import service as cache
from cachelayer.models import CacheEntry
from corpus.embedding import get_encoder
from corpus.ingest import ingest_paths
from tenants import actions
from tenants.models import Tenant
from tenants.rls import staff_tenant_context, tenant_context

DOCS = {
    "webhooks.md": "# Webhooks\n\n## Retries\n\nFailed webhook deliveries are retried up to 8 times. "
                   "The backoff between webhook retries doubles each time, starting at 30 seconds.\n",
    "rate-limits.md": "# Rate limits\n\n## Limits\n\nThe API allows 100 requests per second per key. "
                      "When you hit the rate limit, back off for the number of seconds in Retry-After; "
                      "the rate-limit backoff is linear, not exponential.\n",
    "errors.md": "# Errors\n\n## E1042\n\nError E1042 means the API key was revoked.\n\n## E1043\n\n"
                 "Error E1043 means the request signature has expired.\n",
}


@pytest.fixture
def shop(db: Any, tmp_path: Path, demo_corpus: Any) -> Tenant:
    tenant, _ = actions.tenant_get_or_create(slug="cache-shop")
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    ingest_paths(tenant=tenant, paths=[tmp_path])
    tenant.folder = tmp_path  # type: ignore[attr-defined]
    return tenant


def ask(tenant: Tenant, question: str, history: list[dict[str, str]] | None = None, conversation: str = "c") -> Any:
    return answer(tenant=tenant, audiences=["public"], question=question, history=history or [],
                  conversation_id=conversation)


def entries(tenant: Tenant) -> list[CacheEntry]:
    with staff_tenant_context([tenant.id]):
        return list(CacheEntry.objects.filter(tenant=tenant).order_by("id"))


def trace(tenant: Tenant, trace_id: int) -> Trace:
    with tenant_context(tenant.id):
        return Trace.objects.get(pk=trace_id)


@pytest.mark.django_db
def test_a_repeat_is_served_from_cache_at_zero_cost(shop: Tenant) -> None:
    first = ask(shop, "How many times are failed webhook deliveries retried?")
    again = ask(shop, "how many times are failed webhook deliveries retried")
    assert first.action == "answered" and not first.cache_hit
    assert again.cache_hit and again.text == first.text and again.sources == first.sources
    hit = trace(shop, again.trace_id)
    assert hit.cache_hit and hit.input_tokens == 0 and hit.output_tokens == 0 and float(hit.cost_usd) == 0.0
    assert hit.details["cache"]["kind"] == "exact" and hit.generator == "extractive"


@pytest.mark.django_db
def test_same_four_words_in_two_conversations_never_share_an_answer(shop: Tenant) -> None:
    webhooks = [{"role": "user", "content": "How do webhook retries work?"},
                {"role": "assistant", "content": "They are retried up to 8 times [1]."}]
    limits = [{"role": "user", "content": "What happens when I hit the API rate limit?"},
              {"role": "assistant", "content": "Back off for Retry-After seconds [1]."}]
    a = ask(shop, "What about the backoff?", webhooks, conversation="A")
    b = ask(shop, "What about the backoff?", limits, conversation="B")
    assert a.rewritten_query != b.rewritten_query
    assert not b.cache_hit and a.text != b.text
    assert "doubles" in a.text and "linear" in b.text


@pytest.mark.django_db
def test_identifier_near_miss_is_never_served_semantically(shop: Tenant) -> None:
    e1042 = ask(shop, "What does error E1042 mean?")
    e1043 = ask(shop, "What does error E1043 mean?")
    assert not e1043.cache_hit and "expired" in e1043.text and "revoked" not in e1043.text
    assert "revoked" in e1042.text
    stored = {e.query_norm: e.has_identifier for e in entries(shop)}
    assert stored["what does error e1042 mean"] is True


@pytest.mark.django_db
def test_forced_fail_without_the_identifier_guard_the_near_miss_is_served(shop: Tenant, monkeypatch: Any) -> None:
    monkeypatch.setattr(cache, "has_identifier", lambda query: False)
    ask(shop, "What does error E1042 mean?")
    near = ask(shop, "What does error E1043 mean?")
    assert near.cache_hit and "revoked" in near.text  # the wrong answer the guard exists to prevent


@pytest.mark.django_db
def test_semantic_hit_for_a_paraphrase_without_identifiers(shop: Tenant, settings: Any) -> None:
    settings.CACHE_SEMANTIC_MIN_SIMILARITY = 0.9
    ask(shop, "How many times are failed webhook deliveries retried?")
    near = ask(shop, "How many times do failed webhook deliveries get retried?")
    assert near.cache_hit and trace(shop, near.trace_id).details["cache"]["kind"] == "semantic"


@pytest.mark.django_db
def test_abstentions_are_never_cached(shop: Tenant) -> None:
    first = ask(shop, "What is the capital of Mongolia?")
    second = ask(shop, "What is the capital of Mongolia?")
    assert first.action == second.action == "escalated" and not second.cache_hit
    assert entries(shop) == []


@pytest.mark.django_db
def test_reingest_drops_exactly_the_entries_built_on_the_changed_document(
    shop: Tenant, django_capture_on_commit_callbacks: Any
) -> None:
    ask(shop, "How many times are failed webhook deliveries retried?")
    ask(shop, "What does error E1042 mean?")
    before = {e.query_norm for e in entries(shop)}
    assert len(before) == 2
    folder: Path = shop.folder  # type: ignore[attr-defined]
    (folder / "webhooks.md").write_text("# Webhooks\n\n## Retries\n\nFailed webhook deliveries are retried up to 12 times.\n")
    with django_capture_on_commit_callbacks(execute=True):
        ingest_paths(tenant=shop, paths=[folder])
    assert {e.query_norm for e in entries(shop)} == {"what does error e1042 mean"}
    fresh = ask(shop, "How many times are failed webhook deliveries retried?")
    assert not fresh.cache_hit and "12 times" in fresh.text


@pytest.mark.django_db
def test_entries_are_invisible_to_another_tenant_and_to_a_narrower_audience(shop: Tenant) -> None:
    ask(shop, "How many times are failed webhook deliveries retried?")
    vector = get_encoder().encode_one("How many times are failed webhook deliveries retried?")
    other, _ = actions.tenant_get_or_create(slug="cache-other")
    public = actions.audience_ids(tenant=shop, slugs=["public"])
    wider = actions.audience_ids(tenant=shop, slugs=["public", "internal"])
    kwargs = dict(query="How many times are failed webhook deliveries retried?", query_vector=vector,
                  generator="extractive")
    assert cache.lookup(tenant_id=shop.id, audience_ids=public, **kwargs) is not None  # control
    assert cache.lookup(tenant_id=other.id, audience_ids=actions.audience_ids(tenant=other, slugs=["public"]),
                        **kwargs) is None
    assert cache.lookup(tenant_id=shop.id, audience_ids=wider, **kwargs) is None  # the key holds the audience set


def test_two_identical_first_requests_write_one_entry(django_db_setup: Any, django_db_blocker: Any) -> None:
    with django_db_blocker.unblock():
        tenant, _ = actions.tenant_get_or_create(slug="cache-race")
        audiences = actions.audience_ids(tenant=tenant, slugs=["public"])
        vector = get_encoder().encode_one("race question")
        results: list[int | None] = []
        barrier = threading.Barrier(2)

        def store() -> None:
            from django.db import connection

            barrier.wait()
            try:
                results.append(cache.store(tenant_id=tenant.id, audience_ids=audiences, query="Race question?",
                                           query_vector=vector, generator="extractive", answer="A", sources=[],
                                           conflict=False, provider="", model="", trace_id=None, cost_usd=0.0,
                                           chunk_ids=[]))
            finally:
                connection.close()

        threads = [threading.Thread(target=store) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(results, key=lambda r: r is None) [1] is None and any(results)
        assert len(entries(tenant)) == 1
        cache.purge_tenant(tenant_id=tenant.id)
        assert entries(tenant) == []


@pytest.mark.django_db
def test_console_shows_hit_rate_and_cost_saved(shop: Tenant) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from answering.stats import answer_stats

    ask(shop, "How many times are failed webhook deliveries retried?")
    ask(shop, "How many times are failed webhook deliveries retried?")
    with staff_tenant_context([shop.id]):
        [stats] = answer_stats([shop.id])
    assert (stats.answers, stats.cache_hits) == (2, 1) and stats.hit_rate == 0.5
    root = get_user_model().objects.create_superuser("root-cache", "r@example.com", "pw")
    client = Client()
    client.force_login(root)
    page = client.get("/admin/answering/trace/").content.decode()
    assert "cache hit rate" in page and "cache-shop" in page and "50%" in page
