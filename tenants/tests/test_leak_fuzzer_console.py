"""Leak fuzzer, staff side: a narrower-audience member reads every console page.

Readers of every audience of two tenants ask questions through the answer pipeline with the
cache on (answers, cache entries and hits, escalations forced by an impossible gate), vote on
the traces with comments, queue uploads and leave an eval run; every row carries the canaries
(tests/test_leak_fuzzer.py) of the audiences it was read or written with. Then staff members
sign in (public + customer, and public only, both agents) and GET every console page: lists,
searches that quote canaries, every change page (another audience's rows must be 404s), the
dashboard, triage views, eval runs, documents, cache entries, ingest jobs, the API key form,
memberships. Zero tolerance: no canary of an audience the member lacks (or of another tenant)
appears in any response. The control shows the member's own canaries on those pages; the
forced-fail run removes the audience rule (tenants.staff.within_audiences) and the scan goes red.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Q
from django.test import Client, override_settings

from answering.pipeline import records
from answering.models import Escalation, Trace
from answering.pipeline.flow import answer
from cachelayer.models import CacheEntry
from corpus.ingest import ingest_paths
from corpus.jobs import ingest_job_create
from corpus.models import Document, IngestJob
from evaluation.models import EvalRun
from evaluation.runner import eval_run_store
from tenants import actions, staff
from tenants.models import Membership, Tenant
from tenants.rls import rls_transaction
from tenants.tests.test_leak_fuzzer import AUDIENCES, READER_SETS, TOPICS, Leak, _write_corpus, canaries_of, scan

# Own tenants, planted with the reader-side fuzzer's corpora (its canaries, renamed to these
# tenants): that fuzzer's traces in leak-a quote hidden canaries in public askers' questions.
TENANTS = {"console-a": "leak-a", "console-b": "leak-b"}
HOME = "console-a"
PERMISSIONS = ("view_escalation", "change_escalation", "view_trace", "view_document", "view_ingestjob",
               "add_ingestjob", "view_cacheentry", "view_evalrun", "view_apikey", "add_apikey", "view_membership",
               "change_membership", "view_tenant", "view_audience")
MEMBERS = {"console-narrow": ("public", "customer"), "console-public": ("public",)}


@dataclass
class ConsoleWorld:
    tenants: dict[str, Tenant]
    canaries: dict[str, tuple[str, str]]  # canary -> (tenant slug, audience)
    members: dict[str, tuple[str, ...]]  # username -> audiences held on leak-a

    def forbidden(self, audiences: tuple[str, ...]) -> list[str]:
        return [c for c, (t, a) in self.canaries.items() if t != HOME or a not in audiences]

    def allowed(self, audiences: tuple[str, ...]) -> list[str]:
        return [c for c, (t, a) in self.canaries.items() if t == HOME and a in audiences]


def _own_questions(tenant: str, audiences: tuple[str, ...]) -> list[str]:
    """Questions quoting only canaries the reader may read: anything else on a member's page is a leak."""
    asked = []
    for audience in audiences:
        for topic in TOPICS:
            word, ident = canaries_of(TENANTS[tenant], audience, topic)
            asked += [f"What is {word}?", f"error {ident} when calling the API"]
    return asked


def _ask(tenant: Tenant, audiences: tuple[str, ...]) -> None:
    own = _own_questions(tenant.slug, audiences)
    for question in own + own[:4]:  # the repeats are served from the cache
        result = answer(tenant=tenant, audiences=list(audiences), question=question, use_default_chain=False)
        if result.trace_id:
            word = next(c for c in re.findall(r"quokka\w+|LK-[\w-]+", question))
            records.feedback_record(tenant=tenant, audiences=list(audiences), trace_id=result.trace_id, vote=-1,
                                    comment=f"wrong about {word}")
    # An impossible gate: every question escalates, with what retrieval found and the asker's words.
    with override_settings(ANSWER_GATE_RERANK_MIN=2.0, ANSWER_GATE_FUSION_MIN=2.0, CACHE_ENABLED=False):
        for question in own[::3]:
            answer(tenant=tenant, audiences=list(audiences), question=f"urgent: {question}", use_default_chain=False)


def _leave_jobs_and_an_eval_run(tenant: Tenant, folder: Path) -> None:
    """Queued uploads named after each audience's canary, and an eval run over internal questions."""
    from evaluation.golden import load_golden
    from evaluation.runner import run_eval

    for audience in AUDIENCES:
        word, _ = canaries_of(TENANTS[tenant.slug], audience, "refunds")
        held = list(AUDIENCES[: AUDIENCES.index(audience) + 1])
        ingest_job_create(tenant=tenant, files=[SimpleUploadedFile(f"{word}.md", f"# {word}\n".encode())],
                          audience=audience, writer_audiences=held)
    internal = [canaries_of(TENANTS[tenant.slug], "internal", t)[0] for t in TOPICS]
    path = folder / f"golden-{tenant.slug}.yaml"
    path.write_text(yaml.safe_dump({"tenant": tenant.slug, "audience": "internal", "cases": [
        # Ids name the canary: the report page lists a missed case by id (the locator finds nothing).
        {"id": f"case-{word}", "type": "normal", "question": f"What is {word}?",
         "expected": [{"source": "doc", "slug": "nowhere"}]} for word in internal]}))
    eval_run_store(tenant=tenant, report=run_eval(golden=load_golden(path), tenant=tenant, arms=["hybrid"]))


@pytest.fixture(scope="module")
def console_world(django_db_setup: Any, django_db_blocker: Any,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleWorld]:
    root = tmp_path_factory.mktemp("console-leak")
    canaries: dict[str, tuple[str, str]] = {}
    tenants: dict[str, Tenant] = {}
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=str(root / "media")):
        for slug, source in TENANTS.items():
            tenant, _ = actions.tenant_get_or_create(slug=slug)
            tenants[slug] = tenant
            canaries.update({c: (slug, a) for c, (_, a) in _write_corpus(root, source).items()})
            assert ingest_paths(tenant=tenant, paths=[root / source]).ok
            for audiences in READER_SETS:
                _ask(tenant, audiences)
            _leave_jobs_and_an_eval_run(tenant, root)
        for username, audiences in MEMBERS.items():
            user, _ = get_user_model().objects.get_or_create(username=username, defaults={"is_staff": True})
            user.user_permissions.set(Permission.objects.filter(codename__in=PERMISSIONS))
            actions.membership_grant(tenant=tenants[HOME], user=user, role="agent", audience_slugs=list(audiences))
        yield ConsoleWorld(tenants, canaries, MEMBERS)


def _ids(world: ConsoleWorld) -> dict[str, list[int]]:
    """Every row of both tenants, whoever may read it: each change page is fetched."""
    found: dict[str, list[int]] = {}
    for tenant in world.tenants.values():
        with rls_transaction(tenant_id=tenant.id, all_audiences=True):
            for name, model in (("answering/trace", Trace), ("answering/escalation", Escalation),
                                ("cachelayer/cacheentry", CacheEntry), ("evaluation/evalrun", EvalRun),
                                ("corpus/document", Document), ("corpus/ingestjob", IngestJob),
                                ("tenants/membership", Membership)):
                found.setdefault(name, []).extend(model.objects.filter(tenant=tenant).values_list("pk", flat=True))
    return found


def console_pages(world: ConsoleWorld) -> Iterator[tuple[str, str]]:
    """(url, text the member typed into it): every console page a member can ask for."""
    yield "/admin/", ""
    searches = sorted(world.canaries)[::7]
    for name in ("answering/trace", "answering/escalation", "cachelayer/cacheentry", "evaluation/evalrun",
                 "corpus/document", "corpus/ingestjob", "tenants/membership", "tenants/apikey", "tenants/tenant",
                 "tenants/audience"):
        yield f"/admin/{name}/", ""
        for term in searches:
            yield f"/admin/{name}/?q={term}", term
    for category in ("cache", "stale_data", "retrieval", "generation", "unclear"):
        yield f"/admin/answering/trace/?triage={category}", ""
    yield "/admin/answering/trace/?feedback__exact=-1", ""
    yield "/admin/answering/escalation/?status__exact=open", ""
    yield "/admin/answering/trace/dashboard/", ""
    yield "/admin/answering/trace/dashboard/?days=90", ""
    yield "/admin/tenants/apikey/add/", ""
    yield "/admin/corpus/ingestjob/add/", ""
    for name, ids in _ids(world).items():
        for pk in ids:
            yield f"/admin/{name}/{pk}/change/", ""
            yield f"/admin/{name}/{pk}/history/", ""


def read_console(world: ConsoleWorld, username: str) -> Iterator[tuple[str, str]]:
    """(url, body) over real HTTP requests of the signed-in member; what they typed is cut out."""
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    for url, typed in console_pages(world):
        response = client.get(url)
        assert response.status_code in (200, 403, 404), (url, response.status_code)
        body = response.content.decode()
        yield url, re.sub(re.escape(typed), "", body, flags=re.IGNORECASE) if typed else body


def scan_console(world: ConsoleWorld, username: str) -> dict[str, str]:
    forbidden = world.forbidden(world.members[username])
    bodies = {}
    for url, body in read_console(world, username):
        scan(f"console {username} {url}", body, forbidden)
        bodies[url] = body
    return bodies


@pytest.fixture(scope="module")
def scanned(console_world: ConsoleWorld, django_db_blocker: Any) -> dict[str, dict[str, str]]:
    """Each member's whole console, scanned once (the pages are kept for the control)."""
    with django_db_blocker.unblock():
        return {username: scan_console(console_world, username) for username in sorted(MEMBERS)}


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.parametrize("username", sorted(MEMBERS))
def test_a_narrower_member_never_reads_a_forbidden_canary_in_the_console(scanned: dict[str, dict[str, str]],
                                                                         username: str) -> None:
    assert len(scanned[username]) > 200  # every page was read and scanned


def _shown(bodies: dict[str, str], prefix: str, canaries: list[str]) -> set[str]:
    text = "\n".join(b for u, b in bodies.items() if u.startswith(prefix)).lower()
    return {c for c in canaries if c.lower() in text}


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.parametrize("username", sorted(MEMBERS))
def test_control_the_members_own_canaries_are_on_those_pages(console_world: ConsoleWorld,
                                                             scanned: dict[str, dict[str, str]], username: str) -> None:
    """Without this, a console that showed nothing would pass by showing nothing."""
    audiences = console_world.members[username]
    bodies = scanned[username]
    for prefix in ("/admin/answering/trace/", "/admin/answering/escalation/", "/admin/cachelayer/cacheentry/",
                   "/admin/corpus/document/", "/admin/corpus/ingestjob/"):
        for audience in audiences:
            own = console_world.allowed((audience,))
            assert _shown(bodies, prefix, own), (username, prefix, audience)


@pytest.mark.slow
@pytest.mark.django_db
def test_control_a_member_holding_every_audience_reads_the_eval_run(console_world: ConsoleWorld) -> None:
    user, _ = get_user_model().objects.get_or_create(username="console-full", defaults={"is_staff": True})
    user.user_permissions.set(Permission.objects.filter(codename__in=PERMISSIONS))
    actions.membership_grant(tenant=console_world.tenants[HOME], user=user, role="owner",
                             audience_slugs=list(AUDIENCES))
    client = Client()
    client.force_login(user)
    internal = console_world.allowed(("internal",))
    with rls_transaction(tenant_id=console_world.tenants[HOME].id, all_audiences=True):
        runs = list(EvalRun.objects.filter(tenant=console_world.tenants[HOME]).values_list("pk", flat=True))
    assert runs
    narrow = Client()
    narrow.force_login(get_user_model().objects.get(username="console-narrow"))
    for pk in runs:
        page = client.get(f"/admin/evaluation/evalrun/{pk}/change/").content.decode().lower()
        assert any(c.lower() in page for c in internal)
        assert narrow.get(f"/admin/evaluation/evalrun/{pk}/change/").status_code == 404


@pytest.mark.slow
@pytest.mark.django_db
def test_forced_fail_without_the_audience_rule_the_scan_goes_red(console_world: ConsoleWorld,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The one rule (tenants.staff.within_audiences) replaced by "any row of the tenant": the
    narrower member now reads internal rows, and the same scan must say so."""
    monkeypatch.setattr(staff, "within_audiences", lambda access, **kwargs: Q())
    with pytest.raises(Leak):
        scan_console(console_world, "console-narrow")
