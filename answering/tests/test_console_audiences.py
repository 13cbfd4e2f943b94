"""The console shows a staff member only rows within their audiences (issue 15, item 3).

acme's agent holds public + customer; acme's owner holds every audience. A trace, cache entry
or escalation read with `internal` is invisible to the agent everywhere (list, search, change
page, buttons, dashboard numbers); an eval run (read with every audience) only to members who
hold every audience."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from answering.pipeline import records
from answering.models import Escalation, Trace
from answering.console import articles
from answering.console.stats import answer_stats
from answering.tests.console_data import candidate, escalation_make, staff_client
from cachelayer import service as cache
from cachelayer.models import CacheEntry
from corpus.encoders.embedding import get_encoder
from evaluation.runner import eval_run_store
from tenants.rls import rls_transaction, staff_tenant_context, tenant_context

pytestmark = pytest.mark.django_db

SECRET = "sekritmargin"  # only in rows read with the internal audience
OPEN = "openanvils"  # in rows read with public and customer


def trace_with(tenant: Any, audiences: list[str], text: str, *, feedback: int | None = None,
               cost: float = 0.0) -> Trace:
    return records.trace_create(tenant=tenant, fields={
        "action": "answered", "audiences": audiences, "question": f"what about {text}?",
        "answer": f"The answer mentions {text}.", "cost_usd": cost, "feedback": feedback,
        "feedback_comment": f"comment on {text}" if feedback else "",
        "gate": {"passed": True, "score": 0.8, "score_kind": "rerank", "threshold": 0.05, "reason": "ok"},
        "retrieval": {"candidates": [candidate(text)], "dropped": []},
        "citations": [{"number": 1, "chunk_id": 1, "document_id": 1, "slug": text, "title": text,
                       "source_type": "doc", "heading_path": "", "page": None, "snippet": f"snippet {text}",
                       "effective_date": None}],
        "stage_ms": {"retrieve": 10.0}})


@pytest.fixture
def rows(acme: Any) -> dict[str, Trace]:
    return {"internal": trace_with(acme.tenant, ["public", "customer", "internal"], SECRET, feedback=-1, cost=1.0),
            "open": trace_with(acme.tenant, ["public", "customer"], OPEN, feedback=-1, cost=0.5)}


def test_trace_read_with_internal_is_invisible_to_a_narrower_agent(acme: Any, rows: dict[str, Trace]) -> None:
    agent = staff_client(acme.agent)
    for url in ("/admin/answering/trace/", f"/admin/answering/trace/?q={SECRET}",
                "/admin/answering/trace/?triage=generation", "/admin/answering/trace/?feedback__exact=-1"):
        page = agent.get(url).content.decode()
        assert f"/admin/answering/trace/{rows['internal'].pk}/change/" not in page, url
        assert SECRET not in page.replace(f"q={SECRET}", "").replace(f'value="{SECRET}"', ""), url
    assert OPEN in agent.get("/admin/answering/trace/").content.decode()
    assert agent.get(f"/admin/answering/trace/{rows['internal'].pk}/change/").status_code == 404
    page = agent.get(f"/admin/answering/trace/{rows['open'].pk}/change/").content.decode()
    assert f"snippet {OPEN}" in page and f"comment on {OPEN}" in page
    owner = staff_client(acme.owner).get(f"/admin/answering/trace/{rows['internal'].pk}/change/")
    assert owner.status_code == 200 and f"snippet {SECRET}" in owner.content.decode()


def test_escalation_of_an_internal_trace_is_invisible_and_cannot_be_worked(acme: Any) -> None:
    hidden = escalation_make(acme.tenant, f"escalated {SECRET}", audiences=["public", "internal"])
    shown = escalation_make(acme.tenant, f"escalated {OPEN}", audiences=["public"])
    agent = staff_client(acme.agent)
    listing = agent.get("/admin/answering/escalation/").content.decode()
    assert SECRET not in listing and OPEN in listing
    assert agent.get(f"/admin/answering/escalation/{hidden.pk}/change/").status_code == 404
    for suffix in ("claim/", "resolve/", "reply/", "article/"):
        assert agent.post(f"/admin/answering/escalation/{hidden.pk}/{suffix}").status_code == 404, suffix
    agent.post("/admin/answering/escalation/", {"action": "claim", "_selected_action": [hidden.pk, shown.pk]})
    with tenant_context(acme.tenant.id):
        assert Trace.objects.get(pk=hidden.trace_id).escalation.status == "open"
        assert Trace.objects.get(pk=shown.trace_id).escalation.status == "claimed"
    # the article form offers the agent's own audiences only (once the draft is in one the agent holds)
    agent.post(f"/admin/answering/escalation/{shown.pk}/resolve/", {"note": "Done.", "to_document": "on"})
    assert agent.get(f"/admin/answering/escalation/{shown.pk}/article/").status_code == 403  # drafted internal
    with tenant_context(acme.tenant.id):
        draft = Escalation.objects.select_related("tenant").get(pk=shown.pk)
    articles.article_draft_save(escalation=draft, user=acme.owner, question="q?", answer="Done.", audience="public")
    page = agent.get(f"/admin/answering/escalation/{shown.pk}/article/").content.decode()
    assert 'value="customer"' in page and 'value="internal"' not in page
    assert SECRET in staff_client(acme.owner).get("/admin/answering/escalation/").content.decode()


def test_cache_entry_of_the_internal_audience_is_invisible(acme: Any) -> None:
    vector = get_encoder().encode_one("anvil margins")
    for audiences, text in (([acme.public_id, acme.internal_id], SECRET), ([acme.public_id], OPEN)):
        cache.store(tenant_id=acme.tenant.id, audience_ids=audiences, query=f"query {text}", query_vector=vector,
                    generator="extractive", answer=f"answer {text}", sources=[], conflict=False, provider="",
                    model="", trace_id=None, cost_usd=0.0, chunk_ids=[])
    with rls_transaction(tenant_id=acme.tenant.id, all_audiences=True):
        hidden = CacheEntry.objects.get(query_norm=f"query {SECRET}")
    agent = staff_client(acme.agent)
    listing = agent.get(f"/admin/cachelayer/cacheentry/?q={SECRET}").content.decode()
    assert f"/admin/cachelayer/cacheentry/{hidden.pk}/change/" not in listing
    assert OPEN in agent.get("/admin/cachelayer/cacheentry/").content.decode()
    assert agent.get(f"/admin/cachelayer/cacheentry/{hidden.pk}/change/").status_code == 404
    assert f"answer {SECRET}" in staff_client(acme.owner).get(
        f"/admin/cachelayer/cacheentry/{hidden.pk}/change/").content.decode()


def test_an_agent_may_not_purge_the_cache(acme: Any) -> None:
    vector = get_encoder().encode_one("anvils")
    cache.store(tenant_id=acme.tenant.id, audience_ids=[acme.public_id], query="query anvils", query_vector=vector,
                generator="extractive", answer="a", sources=[], conflict=False, provider="", model="",
                trace_id=None, cost_usd=0.0, chunk_ids=[])
    with rls_transaction(tenant_id=acme.tenant.id, all_audiences=True):
        entry = CacheEntry.objects.get()
    agent = staff_client(acme.agent)
    assert "purge_tenants" not in agent.get("/admin/cachelayer/cacheentry/").content.decode()
    agent.post("/admin/cachelayer/cacheentry/", {"action": "purge_tenants", "_selected_action": [entry.pk]})
    with rls_transaction(tenant_id=acme.tenant.id, all_audiences=True):
        assert CacheEntry.objects.filter(pk=entry.pk).exists()


def test_eval_runs_are_for_members_holding_every_audience(acme: Any) -> None:
    run = eval_run_store(tenant=acme.tenant, report={"golden": f"golden-{SECRET}", "arms": {}})
    agent = staff_client(acme.agent)
    assert f"golden-{SECRET}" not in agent.get("/admin/evaluation/evalrun/").content.decode()
    assert agent.get(f"/admin/evaluation/evalrun/{run.pk}/change/").status_code == 404
    assert f"golden-{SECRET}" in staff_client(acme.owner).get("/admin/evaluation/evalrun/").content.decode()


def _total_queries(html: bytes) -> int:
    match = re.search(rb'id="total-queries">(\d+)<', html)
    assert match, html[:2000]
    return int(match.group(1))


def test_dashboard_and_stats_count_only_rows_the_member_could_see(acme: Any, rows: dict[str, Trace]) -> None:
    agent, owner = staff_client(acme.agent), staff_client(acme.owner)
    assert _total_queries(agent.get("/admin/answering/trace/dashboard/").content) == 1
    assert _total_queries(owner.get("/admin/answering/trace/dashboard/").content) == 2
    # the per-tenant table above the trace list: one answer and $0.5 for the agent, not two and $1.5
    listing = agent.get("/admin/answering/trace/").content.decode()
    assert "$0.5000" in listing and "$1.5000" not in listing
    assert "$1.5000" in owner.get("/admin/answering/trace/").content.decode()
    # triage counts on the dashboard: one trace with feedback for the agent
    board = agent.get("/admin/answering/trace/dashboard/").content.decode()
    assert sum(int(n) for n in re.findall(r'id="triage-[a-z_]+">(\d+)<', board)) == 1


def test_superuser_sees_every_audience(acme: Any, rows: dict[str, Trace]) -> None:
    root = get_user_model().objects.create_superuser("aud-root", password="pw")
    page = staff_client(root).get("/admin/answering/trace/").content.decode()
    assert SECRET in page and OPEN in page
    with transaction.atomic(), staff_tenant_context([acme.tenant.id]):
        stats = answer_stats(tenant_ids=[acme.tenant.id], audiences=None)
    assert stats[0].answers == 2


def test_answer_stats_with_the_agents_audiences(acme: Any, rows: dict[str, Trace]) -> None:
    with transaction.atomic(), staff_tenant_context([acme.tenant.id]):
        stats = answer_stats(tenant_ids=[acme.tenant.id], audiences={acme.tenant.id: ["public", "customer"]})
    assert stats[0].answers == 1
