"""The answer cache: never the wrong answer, never stale, never an abstention, honest costs."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from answering.models import Trace
from answering.pipeline.flow import answer
from answering.providers import Completion, Message, ProviderConfig, build_provider
from answering.providers.chain import ProviderChain
from answering.tests.fake_provider import fake_provider
from cachelayer import service as cache
from cachelayer.models import CacheEntry
from corpus.encoders.embedding import get_encoder
from corpus.ingest.flow import ingest_paths
from corpus.models import Document
from corpus.ingest.store import archive_documents
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
def test_identifier_near_miss_is_never_served_semantically(shop: Tenant, settings: Any) -> None:
    # The two questions sit at cosine ~0.95, on the default threshold's edge, and int8 moves them
    # by a few thousandths: below it, the threshold alone would refuse the near miss. At 0.9 it
    # admits it (the forced fail below), so only the identifier guard stands in the way.
    settings.CACHE_SEMANTIC_MIN_SIMILARITY = 0.9
    e1042 = ask(shop, "What does error E1042 mean?")
    e1043 = ask(shop, "What does error E1043 mean?")
    assert not e1043.cache_hit and "expired" in e1043.text and "revoked" not in e1043.text
    assert "revoked" in e1042.text
    stored = {e.query_norm: e.has_identifier for e in entries(shop)}
    assert stored["what does error e1042 mean"] is True


@pytest.mark.django_db
def test_forced_fail_without_the_identifier_guard_the_near_miss_is_served(shop: Tenant, monkeypatch: Any,
                                                                          settings: Any) -> None:
    settings.CACHE_SEMANTIC_MIN_SIMILARITY = 0.9  # as in the test above: the guard, not the threshold
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
    shop: Tenant, tmp_path: Path, django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    # An entry is built on every chunk of its context, and a context of six would hold all four
    # of the shop's chunks (docs/decisions/0042 drops nothing before the gate): one chunk each.
    settings.ANSWER_CONTEXT_CHUNKS = 1
    ask(shop, "How many times are failed webhook deliveries retried?")
    ask(shop, "What does error E1042 mean?")
    before = {e.query_norm for e in entries(shop)}
    assert len(before) == 2
    folder = tmp_path  # the shop's folder: one tmp_path per test, shared with its fixtures
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
    kwargs: dict[str, Any] = dict(query="How many times are failed webhook deliveries retried?", query_vector=vector,
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
            barrier.wait()
            try:
                results.append(cache.store(tenant_id=tenant.id, audience_ids=audiences, query="Race question?",
                                           query_vector=vector, generator="extractive", answer="A", sources=[],
                                           conflict=False, provider="", model="", trace_id=None, cost_usd=0.0,
                                           chunk_ids=[]).entry_id)
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

    from answering.console.stats import answer_stats

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


# -- an ingest that retires the cited chunks while the model is writing -----------------------

SECRET_DOC = ("# Staging\n\n## Access\n\nThe staging admin password is hunter2. "
              "Staging resets every night at 02:00 UTC.\n")
CLEAN_DOC = "# Staging\n\n## Access\n\nAsk the on-call engineer for staging access. Staging resets every night.\n"
SECRET_QUESTION = "What is the staging admin password?"
SECRET_ANSWER = json.dumps({"answer": "The staging admin password is hunter2 [1].", "citations": [1],
                            "declined": False})


def committed_tenant(slug: str, folder: Path) -> Tenant:
    """A tenant whose rows are committed, so an ingest on another connection sees and replaces them."""
    tenant, _ = actions.tenant_get_or_create(slug=slug)
    (folder / "staging.md").write_text(SECRET_DOC)
    ingest_paths(tenant=tenant, paths=[folder])
    return tenant


class IngestWhileWriting:
    """A provider in front of the real local one: before the first token, a worker on its own
    connection re-ingests the folder (the secret is gone) and commits, as an upload job would
    while the model writes. Retrieval has already happened; the cache store has not."""

    def __init__(self, inner: Any, tenant: Tenant, folder: Path) -> None:
        self.inner, self.tenant, self.folder = inner, tenant, folder
        self.name, self.model = inner.name, inner.model
        self.ingested = False

    def stream(self, messages: Sequence[Message], *, temperature: float, max_tokens: int,
               json_output: bool) -> Iterator[str | Completion]:
        if not self.ingested:
            self.ingested = True
            (self.folder / "staging.md").write_text(CLEAN_DOC)
            worker = threading.Thread(target=self._ingest)
            worker.start()
            worker.join()
        yield from self.inner.stream(messages, temperature=temperature, max_tokens=max_tokens,
                                     json_output=json_output)

    def _ingest(self) -> None:
        try:
            report = ingest_paths(tenant=self.tenant, paths=[self.folder])
            assert report.ok, report.summary()
        finally:
            connection.close()


def ask_while_ingesting(tenant: Tenant, folder: Path, url: str) -> tuple[Any, IngestWhileWriting]:
    provider = IngestWhileWriting(build_provider(ProviderConfig("openai", f"{url}/v1", "FAKE_OPENAI_KEY",
                                                                "gpt-4o-mini", 5)), tenant, folder)
    result = answer(tenant=tenant, audiences=["public"], question=SECRET_QUESTION, chain=ProviderChain([provider]))
    return result, provider


def ask_again(tenant: Tenant, url: str) -> Any:
    chain = ProviderChain([build_provider(ProviderConfig("openai", f"{url}/v1", "FAKE_OPENAI_KEY", "gpt-4o-mini", 5))])
    return answer(tenant=tenant, audiences=["public"], question=SECRET_QUESTION, chain=chain)


def test_an_ingest_while_the_model_writes_leaves_no_stale_entry(
    django_db_setup: Any, django_db_blocker: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    with django_db_blocker.unblock():
        tenant = committed_tenant("cache-stale", tmp_path)
        try:
            with fake_provider() as (url, script):
                script.openai.append(("ok", SECRET_ANSWER))
                result, provider = ask_while_ingesting(tenant, tmp_path, url)
                assert provider.ingested and result.action == "answered"  # what was live at retrieval went out once
                assert entries(tenant) == []  # but it is not kept: its chunks died before the store
                skipped = trace(tenant, result.trace_id).details["cache_store"]
                assert skipped["entry_id"] is None and "retired" in skipped["skipped"]
                script.openai.append(("ok", json.dumps({"answer": "Ask the on-call engineer [1].",
                                                        "citations": [1], "declined": False})))
                again = ask_again(tenant, url)
            assert not again.cache_hit and "hunter2" not in again.text
        finally:
            cache.purge_tenant(tenant_id=tenant.id)


def test_forced_fail_without_the_liveness_check_the_secret_is_served_from_cache(
    django_db_setup: Any, django_db_blocker: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    monkeypatch.setattr(cache, "_live_chunks", lambda cursor, *, scope, chunk_ids: {c: False for c in chunk_ids})
    with django_db_blocker.unblock():
        tenant = committed_tenant("cache-stale-forced", tmp_path)
        try:
            with fake_provider() as (url, script):
                script.openai.append(("ok", SECRET_ANSWER))
                ask_while_ingesting(tenant, tmp_path, url)
                again = ask_again(tenant, url)
            # The detector goes red: an entry built on dead chunks outlives them and is served.
            assert again.cache_hit and "hunter2" in again.text
        finally:
            cache.purge_tenant(tenant_id=tenant.id)


def test_a_store_never_waits_on_an_ingest_that_is_retiring_its_chunks(
    django_db_setup: Any, django_db_blocker: Any, tmp_path: Path
) -> None:
    """The other order: the ingest has archived the cited chunks but not committed yet. The
    store neither waits (a deadlock with the writer is impossible) nor stores; once the ingest
    commits, nothing stale is left."""
    with django_db_blocker.unblock():
        tenant = committed_tenant("cache-stale-busy", tmp_path)
        audiences = actions.audience_ids(tenant=tenant, slugs=["public"])
        vector = get_encoder().encode_one(SECRET_QUESTION)
        hit = cache_search_chunk_ids(tenant, audiences)
        archived, release = threading.Event(), threading.Event()

        def archive_and_hold() -> None:
            from django.db import transaction

            try:
                with transaction.atomic():
                    with staff_tenant_context([tenant.id]):
                        document_ids = list(Document.objects.filter(tenant=tenant).values_list("id", flat=True))
                    archive_documents(tenant=tenant, document_ids=document_ids)
                    archived.set()
                    release.wait(30)
            finally:
                connection.close()

        holder = threading.Thread(target=archive_and_hold)
        holder.start()
        try:
            assert archived.wait(30)
            stored = cache.store(tenant_id=tenant.id, audience_ids=audiences, query=SECRET_QUESTION,
                                 query_vector=vector, generator="extractive", answer="hunter2", sources=[],
                                 conflict=False, provider="", model="", trace_id=None, cost_usd=0.0,
                                 chunk_ids=hit)
        finally:
            release.set()
            holder.join()
        try:
            assert stored.entry_id is None and "being" in stored.skipped
            assert entries(tenant) == []
        finally:
            cache.purge_tenant(tenant_id=tenant.id)


def test_an_ingest_retiring_chunks_a_store_holds_waits_and_then_drops_the_entry(
    django_db_setup: Any, django_db_blocker: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The third order: the store has checked and locked the chunks and not committed when the
    ingest archives them. The ingest waits for the store's commit, so its after-commit hook sees
    the entry and deletes it (without the lock the hook would run first and miss it)."""
    with django_db_blocker.unblock():
        tenant = committed_tenant("cache-stale-held", tmp_path)
        audiences = actions.audience_ids(tenant=tenant, slugs=["public"])
        vector = get_encoder().encode_one(SECRET_QUESTION)
        cited = cache_search_chunk_ids(tenant, audiences)
        with staff_tenant_context([tenant.id]):
            document_ids = list(Document.objects.filter(tenant=tenant).values_list("id", flat=True))
        inserted, release = threading.Event(), threading.Event()
        real_insert = cache._insert

        def insert_and_hold(cursor: Any, **kwargs: Any) -> int | None:
            entry_id = real_insert(cursor, **kwargs)
            inserted.set()
            release.wait(30)
            return entry_id

        monkeypatch.setattr(cache, "_insert", insert_and_hold)
        results: list[Any] = []

        def in_thread(work: Any) -> threading.Thread:
            def run() -> None:
                try:
                    results.append(work())
                finally:
                    connection.close()
            thread = threading.Thread(target=run)
            thread.start()
            return thread

        storer = in_thread(lambda: cache.store(
            tenant_id=tenant.id, audience_ids=audiences, query=SECRET_QUESTION, query_vector=vector,
            generator="extractive", answer="hunter2", sources=[], conflict=False, provider="", model="",
            trace_id=None, cost_usd=0.0, chunk_ids=cited))
        try:
            assert inserted.wait(60)
            archiver = in_thread(lambda: archive_documents(tenant=tenant, document_ids=document_ids))
            archiver.join(1.0)
            assert archiver.is_alive()  # waiting on the store's share lock
        finally:
            release.set()
            storer.join()
        archiver.join()
        try:
            assert results[0].entry_id is not None  # it was stored (all live at its commit)...
            assert entries(tenant) == []  # ...and deleted by the ingest's hook once both committed
        finally:
            cache.purge_tenant(tenant_id=tenant.id)


def cache_search_chunk_ids(tenant: Tenant, audiences: Sequence[int]) -> list[int]:
    from retrieval.search import search
    from tenants.readers import reader_scope

    scope = reader_scope(tenant=tenant, audiences=["public"])
    result = search(scope=scope, query=SECRET_QUESTION, ts_config=tenant.text_search_config)
    return [c.chunk_id for c in result.candidates[:3]]


@pytest.mark.django_db
def test_a_store_citing_a_retired_chunk_is_skipped_and_says_why(shop: Tenant) -> None:
    audiences = actions.audience_ids(tenant=shop, slugs=["public"])
    vector = get_encoder().encode_one("How many times are failed webhook deliveries retried?")
    live = cache_live_ids(shop)
    kwargs: dict[str, Any] = dict(tenant_id=shop.id, audience_ids=audiences, query_vector=vector, generator="extractive",
                  answer="8 times", sources=[], conflict=False, provider="", model="", trace_id=None, cost_usd=0.0)
    dead = cache.store(query="retired chunk", chunk_ids=[live[0], max(live) + 1000], **kwargs)
    assert dead.entry_id is None and "retired" in dead.skipped
    changed = cache.store(query="contested since", chunk_ids=live[:1], contested_ids=live[:1], **kwargs)
    assert changed.entry_id is None and "contested" in changed.skipped
    kept = cache.store(query="all live", chunk_ids=live[:2], **kwargs)
    assert kept.entry_id is not None and kept.skipped == ""
    assert cache.store(query="all live", chunk_ids=live[:2], **kwargs).skipped == "duplicate"
    assert [e.query_norm for e in entries(shop)] == ["all live"]


def cache_live_ids(tenant: Tenant) -> list[int]:
    from retrieval.search import search
    from tenants.readers import reader_scope

    scope = reader_scope(tenant=tenant, audiences=["public"])
    result = search(scope=scope, query="webhook retries backoff", ts_config=tenant.text_search_config)
    return sorted(c.chunk_id for c in result.candidates)
