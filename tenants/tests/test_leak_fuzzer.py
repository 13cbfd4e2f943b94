"""Leak fuzzer: planted canaries per tenant and per hidden audience, thousands of generated
questions from every tenant and audience, through retrieval, the answer pipeline (and its
cache), the API, the chat page and the eval. Zero tolerance: no canary the asker may not
read ever appears in an answer, a source, a retrieved or dropped candidate, a typo
correction, a trace the asker's tenant can see, a cache hit, or an error message.

Only text the asker typed may echo back (the question itself and what is parsed from it:
lexemes, exact terms, the original side of a correction), so those fields are left out of
the scan, and nothing else is.

The size is set by LEAK_FUZZ_QUESTIONS: per reader (9 readers) that many questions through
retrieval, an eighth of them through the answer pipeline and its cache, a thirtieth through
the API and a fortieth through the chat page: over 4,000 questions at the default of 400.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from answering.models import Escalation, Trace
from answering.pipeline.flow import answer
from cachelayer.models import CacheEntry
from config.liveserver import serve
from corpus.ingest.flow import ingest_paths
from retrieval.search import search
from tenants import actions
from tenants.models import Tenant
from tenants.readers import reader_scope
from tenants.rls import tenant_context

TENANTS = ("leak-a", "leak-b", "leak-c")
AUDIENCES = ("public", "customer", "internal")
READER_SETS: tuple[tuple[str, ...], ...] = (("public",), ("public", "customer"), ("public", "customer", "internal"))
TOPICS = {
    "refunds": "Refunds are issued within {days} days of purchase; partial refunds apply to annual plans.",
    "webhooks": "Failed webhook deliveries are retried {days} times with exponential backoff.",
    "api-keys": "API keys are rotated from the dashboard; a revoked key stops working within {days} minutes.",
    "invoices": "Invoices are emailed on the first day of the month and can be downloaded as PDF.",
    "passwords": "A password reset link expires after {days} hours; request a new one from the sign-in page.",
}
QUESTION_TEMPLATES = [
    "How do {topic} work?", "what is the policy on {topic}", "{topic} help please", "Tell me about {topic}.",
    "Why is my {topic} failing?", "How long until {topic} are processed?",
]
PER_READER = int(os.environ.get("LEAK_FUZZ_QUESTIONS", "400"))


def canaries_of(tenant: str, audience: str, topic: str) -> tuple[str, str]:
    """A word-like canary (stemmed and typo-corrected like any word) and an identifier one
    (the exact-term leg), unique to one tenant, audience and document."""
    t, a, p = tenant[-1], audience[:3], topic.replace("-", "")[:5]
    return f"quokka{t}{a}{p}", f"LK-{t.upper()}{a.upper()}-{p.upper()}-7"


@dataclass(frozen=True)
class Reader:
    tenant: Tenant
    audiences: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.tenant.slug}/{'+'.join(self.audiences)}"


@dataclass
class World:
    tenants: dict[str, Tenant]
    canaries: dict[str, tuple[str, str]]  # canary -> (tenant slug, audience)
    readers: list[Reader]

    def forbidden(self, reader: Reader) -> list[str]:
        return [c for c, (t, a) in self.canaries.items()
                if t != reader.tenant.slug or a not in reader.audiences]

    def allowed(self, reader: Reader) -> list[str]:
        return [c for c, (t, a) in self.canaries.items() if t == reader.tenant.slug and a in reader.audiences]


def _write_corpus(root: Path, tenant: str) -> dict[str, tuple[str, str]]:
    planted: dict[str, tuple[str, str]] = {}
    for audience, (topic, sentence) in itertools.product(AUDIENCES, TOPICS.items()):
        word, ident = canaries_of(tenant, audience, topic)
        planted[word] = planted[ident] = (tenant, audience)
        days = 3 + AUDIENCES.index(audience) * 7 + TENANTS.index(tenant)
        path = root / tenant / audience / f"{topic}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntitle: {topic.title()} ({audience})\naudience: {audience}\n---\n"
            f"# {topic.replace('-', ' ').title()}\n\n## Policy\n\n{sentence.format(days=days)} "
            f"The reference code is {ident} and the codename is {word}.\n\n"
            f"## Troubleshooting\n\nIf {topic.replace('-', ' ')} misbehave, contact support and quote {ident}.\n"
        )
    return planted


@pytest.fixture(scope="module")
def world(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("leak")
    canaries: dict[str, tuple[str, str]] = {}
    tenants: dict[str, Tenant] = {}
    with django_db_blocker.unblock():
        for slug in TENANTS:
            tenant, _ = actions.tenant_get_or_create(slug=slug)
            tenants[slug] = tenant
            canaries.update(_write_corpus(root, slug))
            report = ingest_paths(tenant=tenant, paths=[root / slug])
            assert report.ok, report.failed
    readers = [Reader(t, audiences) for t in tenants.values() for audiences in READER_SETS]
    return World(tenants, canaries, readers)


def questions(world: World, count: int, seed: int) -> Iterator[str]:
    """Topic questions, questions quoting every canary (exact, lower-cased, with a typo, with
    a word around it), and mixtures; deterministic per seed."""
    rng = random.Random(seed)
    canaries = sorted(world.canaries)
    for _ in range(count):
        roll = rng.random()
        topic = rng.choice(list(TOPICS)).replace("-", " ")
        canary = rng.choice(canaries)
        if roll < 0.3:
            yield rng.choice(QUESTION_TEMPLATES).format(topic=topic)
        elif roll < 0.55:
            yield rng.choice([f"What is {canary}?", f"{canary}", f"tell me about {canary.lower()}",
                              f"error {canary} when calling the API"])
        elif roll < 0.75:
            cut = rng.randrange(1, len(canary) - 1)
            typo = canary[:cut] + canary[cut + 1:]  # one character dropped: the typo leg's job
            yield rng.choice([f"what does {typo} mean", f"{typo} {topic}"])
        else:
            other = rng.choice(canaries)
            yield f"{rng.choice(QUESTION_TEMPLATES).format(topic=topic)} {canary} {other}"


class Leak(AssertionError):
    pass


def scan(where: str, value: Any, forbidden: list[str]) -> None:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    lowered = text.lower()
    for canary in forbidden:
        if canary.lower() in lowered:
            raise Leak(f"{where}: canary {canary!r} leaked: …{text[max(0, lowered.index(canary.lower()) - 80):][:200]}…")


def _without_asker_text(trace: Mapping[str, Any]) -> dict[str, Any]:
    """What a trace shows minus the fields that echo the asker's own words."""
    retrieval = dict(trace.get("retrieval") or {})
    # corrected_query is the question with its typos replaced by `corrections`, scanned below.
    for key in ("query", "corrected_query", "lexemes", "exact_terms"):
        retrieval.pop(key, None)
    retrieval["corrections"] = [c.get("corrected") for c in retrieval.get("corrections", [])]
    if "lacking_pull" in retrieval:  # the question's word and the question without it (0067)
        retrieval["lacking_pull"] = {k: v for k, v in retrieval["lacking_pull"].items() if k not in ("lexeme", "without")}
    details = dict(trace.get("details") or {})
    details.pop("rewrite", None)
    return {**{k: v for k, v in trace.items() if k not in ("question", "rewritten_query", "retrieval", "details")},
            "retrieval": retrieval, "details": details}


@pytest.mark.slow
@pytest.mark.django_db
def test_control_every_canary_is_findable_by_the_readers_allowed_to_see_it(world: World) -> None:
    """Without this, a fuzzer over an index that finds nothing would pass by finding nothing."""
    for reader in world.readers:
        scope = reader_scope(tenant=reader.tenant, audiences=list(reader.audiences))
        for canary in world.allowed(reader):
            found = search(scope=scope, query=canary, ts_config=reader.tenant.text_search_config, k=5, rerank="off")
            assert any(canary.lower() in c.content.lower() for c in found.candidates), (reader.name, canary)


@pytest.mark.slow
@pytest.mark.django_db
def test_forced_fail_a_scope_reading_every_audience_trips_the_scan(world: World) -> None:
    """The scan itself can fail: a public reader handed the internal audience finds its canary."""
    reader = next(r for r in world.readers if r.audiences == ("public",))
    wrong = reader_scope(tenant=reader.tenant, audiences=list(AUDIENCES))
    internal = next(c for c, (t, a) in world.canaries.items() if t == reader.tenant.slug and a == "internal")
    result = search(scope=wrong, query=internal, ts_config="english", k=5, rerank="off")
    with pytest.raises(Leak):
        scan("forced", [c.content for c in result.candidates], world.forbidden(reader))


@pytest.mark.slow
@pytest.mark.django_db
def test_retrieval_never_returns_a_forbidden_canary(world: World) -> None:
    asked = 0
    for index, reader in enumerate(world.readers):
        scope = reader_scope(tenant=reader.tenant, audiences=list(reader.audiences))
        forbidden = world.forbidden(reader)
        for question in questions(world, PER_READER, seed=index):
            result = search(scope=scope, query=question, ts_config=reader.tenant.text_search_config, k=10,
                            rerank="off")
            shown = _without_asker_text({"retrieval": result.as_trace()})
            scan(f"search {reader.name} {question!r}", shown, forbidden)
            scan(f"search {reader.name} {question!r}", [c.content + c.title + c.slug for c in result.candidates],
                 forbidden)
            asked += 1
    assert asked == PER_READER * len(world.readers)


@pytest.mark.slow
@pytest.mark.django_db
def test_pipeline_cache_and_traces_never_show_a_forbidden_canary(world: World) -> None:
    """Most privileged reader first, so a cache that ignored audiences would serve the
    internal answer to the public reader of the same question."""
    per_reader = max(20, PER_READER // 8)
    for tenant_slug in TENANTS:
        readers = sorted((r for r in world.readers if r.tenant.slug == tenant_slug), key=lambda r: -len(r.audiences))
        for question in questions(world, per_reader, seed=100 + TENANTS.index(tenant_slug)):
            for reader in readers:
                forbidden = world.forbidden(reader)
                result = answer(tenant=reader.tenant, audiences=list(reader.audiences), question=question,
                                use_default_chain=False)
                where = f"answer {reader.name} {question!r}"
                scan(where, [result.text, result.sources, result.retrieved, result.claims], forbidden)
                if result.trace_id:
                    with tenant_context(reader.tenant.id):
                        trace = Trace.objects.filter(pk=result.trace_id).values().get()
                        escalation = list(Escalation.objects.filter(trace_id=result.trace_id)
                                          .values("candidates", "detail"))
                    scan(where + " trace", _without_asker_text(trace), forbidden)
                    scan(where + " escalation", escalation, forbidden)
    # Every cache entry a tenant can read holds only its own canaries, whatever the audience
    # (entries are per audience set; a reader only ever looks up its own).
    for tenant in world.tenants.values():
        others = [c for c, (t, _) in world.canaries.items() if t != tenant.slug]
        with tenant_context(tenant.id):
            entries = list(CacheEntry.objects.values("answer", "sources"))
        scan(f"cache of {tenant.slug}", entries, others)


@pytest.fixture(scope="module")
def fuzz_server(world: World, django_db_blocker: Any) -> Iterator[tuple[str, dict[str, str]]]:
    """Its own server, with limits high enough for a fuzzer (the session's server keeps the
    product's limits for the tests of those limits); one key per reader."""
    keys = {}
    with django_db_blocker.unblock():
        for reader in world.readers:
            issued = actions.api_key_create(tenant=reader.tenant, name=f"fuzz {reader.name}",
                                            audience_slugs=reader.audiences)
            keys[reader.name] = issued.raw_key
    with serve({"API_RATE_LIMIT_PER_KEY": "1000000", "API_RATE_LIMIT_PER_ADDRESS": "1000000",
                "CHAT_RATE_LIMIT_PER_ADDRESS": "1000000"}) as url:
        yield url, keys


@pytest.mark.slow
def test_api_answers_streams_and_errors_never_show_a_forbidden_canary(world: World,
                                                                      fuzz_server: tuple[str, dict[str, str]]) -> None:
    url, keys = fuzz_server
    per_reader = max(10, PER_READER // 30)
    trace_ids: dict[str, list[int]] = {}
    with httpx.Client(base_url=f"{url}/api/v1", timeout=60) as client:
        for index, reader in enumerate(world.readers):
            forbidden = world.forbidden(reader)
            headers = {"Authorization": f"Bearer {keys[reader.name]}"}
            for n, question in enumerate(questions(world, per_reader, seed=200 + index)):
                stream = n % 4 == 0
                response = client.post("/ask", json={"question": question, "stream": stream}, headers=headers)
                assert response.status_code == 200, response.text
                scan(f"api {reader.name} {question!r}", response.text.replace(question, ""), forbidden)
                if not stream and response.json()["trace_id"]:
                    trace_ids.setdefault(reader.tenant.slug, []).append(response.json()["trace_id"])
        # Errors: another tenant's trace ids, foreign-looking input; the error text must not echo them.
        for reader in world.readers:
            forbidden = world.forbidden(reader)
            headers = {"Authorization": f"Bearer {keys[reader.name]}"}
            for slug, ids in trace_ids.items():
                if slug == reader.tenant.slug:
                    continue
                response = client.post("/feedback", json={"trace_id": ids[0], "vote": -1}, headers=headers)
                assert response.status_code == 404
                scan(f"feedback error {reader.name}", response.text, forbidden)
            for bad in ({"question": ""}, {"question": "x" * 5000}, {"nope": 1}, {"question": "q", "history": "x"}):
                response = client.post("/ask", json=bad, headers=headers)
                assert 400 <= response.status_code < 500
                scan(f"ask error {reader.name}", response.text, forbidden)


@pytest.mark.slow
def test_chat_page_never_shows_a_forbidden_canary(world: World, fuzz_server: tuple[str, dict[str, str]]) -> None:
    """Anonymous visitors read the public audience only."""
    url, _ = fuzz_server
    per_tenant = max(10, PER_READER // 40)
    for index, tenant in enumerate(world.tenants.values()):
        reader = Reader(tenant, ("public",))
        forbidden = world.forbidden(reader)
        with httpx.Client(base_url=url, timeout=60) as client:
            page = client.get(f"/t/{tenant.slug}/")
            assert page.status_code == 200
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
            assert token, "the chat page has no CSRF token"
            for question in questions(world, per_tenant, seed=300 + index):
                posted = client.post(f"/t/{tenant.slug}/ask", data={
                    "csrfmiddlewaretoken": token.group(1), "question": question, "conversation_id": "fuzz"},
                    headers={"HX-Request": "true", "Referer": f"{url}/t/{tenant.slug}/"})
                assert posted.status_code == 200, posted.text[:500]
                stream_url = re.search(r'sse-connect="([^"]+)"', posted.text)
                assert stream_url, posted.text[:500]
                streamed = client.get(stream_url.group(1).replace("&amp;", "&"))
                assert streamed.status_code == 200 and "event: done" in streamed.text
                # The page echoes the question (escaped, and shortened in labels), so a canary the
                # asker typed cannot be told from a leak here; every other forbidden canary is
                # scanned. The same pipeline is scanned for typed canaries through the API above.
                untyped = [c for c in forbidden if c.lower() not in question.lower()]
                scan(f"chat {tenant.slug} {question!r}", posted.text + streamed.text, untyped)


@pytest.mark.slow
@pytest.mark.django_db
def test_eval_reports_never_show_a_forbidden_canary(world: World, tmp_path: Path) -> None:
    """A golden set per reader whose questions quote other tenants' and hidden audiences'
    canaries; the eval's report (cases, retrieved locators, answers) must not carry them."""
    from evaluation.golden import load_golden
    from evaluation.runner import run_eval

    for index, reader in enumerate(world.readers[:: len(READER_SETS)]):  # the public reader of each tenant
        forbidden = world.forbidden(reader)
        cases = [{"id": f"fz-{n}", "type": "must_abstain", "question": q}
                 for n, q in enumerate(itertools.islice(questions(world, 400, seed=400 + index), 25))
                 if any(c.lower() in q.lower() for c in forbidden)]
        path = tmp_path / f"{reader.tenant.slug}.yaml"
        path.write_text(yaml.safe_dump({"tenant": reader.tenant.slug, "audience": "public", "cases": cases}))
        report = run_eval(golden=load_golden(path), tenant=reader.tenant, arms=["hybrid"])
        for case in report["arms"]["hybrid"]["cases"]:
            case = {k: v for k, v in case.items() if k not in ("question", "rewritten_query")}
            scan(f"eval {reader.name}", case, forbidden)
