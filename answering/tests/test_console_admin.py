"""The console in the admin: agents see and work only their tenants' escalations and traces."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from answering.models import Escalation, Trace
from answering.tests.console_data import escalation_make, staff_client, trace_make
from corpus.models import IngestJob
from tenants.rls import tenant_context

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("uploads_in_tmp")]
ACME_Q = "Why was my acme invoice charged twice?"
GLOBEX_Q = "Does globex ship hazardous reagents overnight?"
URL = "/admin/answering/escalation/"


@pytest.fixture
def queue(acme: Any, globex: Any) -> tuple[Escalation, Escalation]:
    mine = escalation_make(acme.tenant, ACME_Q, history=[{"role": "user", "content": "I have an invoice question"},
                                                         {"role": "assistant", "content": "Sure, go ahead."}])
    theirs = escalation_make(globex.tenant, GLOBEX_Q)
    return mine, theirs


def status_of(escalation: Escalation) -> tuple[str, int | None]:
    with tenant_context(escalation.tenant_id):
        row = Escalation.objects.get(pk=escalation.pk)
    return row.status, row.assignee_id


def test_agent_sees_only_their_tenants_escalations(acme: Any, queue: tuple[Escalation, Escalation]) -> None:
    mine, theirs = queue
    listing = staff_client(acme.agent).get(URL)
    assert listing.status_code == 200
    assert ACME_Q.encode() in listing.content
    assert GLOBEX_Q.encode() not in listing.content
    assert b"globex" not in listing.content  # not even as a choice in the tenant filter


def test_another_tenants_escalation_is_a_404_everywhere(acme: Any, queue: tuple[Escalation, Escalation]) -> None:
    mine, theirs = queue
    agent = staff_client(acme.agent)
    assert agent.get(f"{URL}{mine.pk}/change/").status_code == 200
    for suffix in ("change/", "history/"):
        response = agent.get(f"{URL}{theirs.pk}/{suffix}")
        assert response.status_code == 404, suffix
        assert GLOBEX_Q.encode() not in response.content
    for suffix in ("claim/", "resolve/", "reply/", "article/"):
        assert agent.post(f"{URL}{theirs.pk}/{suffix}", {"note": "mine now"}).status_code == 404, suffix
    assert status_of(theirs) == ("open", None)


def test_outsider_sees_nothing_and_superuser_sees_all(acme: Any, queue: tuple[Escalation, Escalation]) -> None:
    mine, theirs = queue
    outsider = staff_client(acme.outsider)
    listing = outsider.get(URL)
    assert ACME_Q.encode() not in listing.content and GLOBEX_Q.encode() not in listing.content
    assert outsider.get(f"{URL}{mine.pk}/change/").status_code == 404
    root = get_user_model().objects.create_superuser("console-root", password="pw")
    everything = staff_client(root).get(URL)
    assert ACME_Q.encode() in everything.content and GLOBEX_Q.encode() in everything.content


def test_claim_action_over_a_mixed_selection_touches_only_own_rows(acme: Any,
                                                                    queue: tuple[Escalation, Escalation]) -> None:
    mine, theirs = queue
    response = staff_client(acme.agent).post(URL, {"action": "claim", "_selected_action": [mine.pk, theirs.pk]})
    assert response.status_code == 302
    assert status_of(mine) == ("claimed", acme.agent.pk)
    assert status_of(theirs) == ("open", None)


def test_change_page_shows_question_history_candidates_reason_and_trace(acme: Any,
                                                                        queue: tuple[Escalation, Escalation]) -> None:
    mine, _ = queue
    page = staff_client(acme.agent).get(f"{URL}{mine.pk}/change/").content.decode()
    assert ACME_Q in page and "I have an invoice question" in page and "Sure, go ahead." in page
    assert "doc/refunds" in page and "0.0100" in page and "rerank" in page  # candidate, its score and kind
    assert "Weak retrieval" in page and "top rerank score 0.0100 &lt; 0.05" in page
    assert f'/admin/answering/trace/{mine.trace_id}/change/' in page
    assert 'id="claim-button"' in page and 'id="resolve-button"' in page
    assert '"fused_score"' not in page  # readable tables, not a JSON dump


def test_view_only_agent_gets_no_buttons_and_cannot_post(acme: Any, queue: tuple[Escalation, Escalation]) -> None:
    mine, _ = queue
    viewer = staff_client(acme.agent, "view_escalation")
    page = viewer.get(f"{URL}{mine.pk}/change/").content
    assert b'id="claim-button"' not in page
    assert viewer.post(f"{URL}{mine.pk}/claim/").status_code == 403
    assert status_of(mine) == ("open", None)


def test_buttons_claim_then_resolve_into_an_article_draft(acme: Any, queue: tuple[Escalation, Escalation]) -> None:
    mine, _ = queue
    agent = staff_client(acme.agent)
    assert agent.post(f"{URL}{mine.pk}/claim/").status_code == 302
    assert status_of(mine) == ("claimed", acme.agent.pk)
    claimed_page = agent.get(f"{URL}{mine.pk}/change/").content.decode()
    assert "Claimed by" in claimed_page and "acme-agent" in claimed_page
    response = agent.post(f"{URL}{mine.pk}/resolve/", {"note": "Refunded the duplicate charge.", "to_document": "on"},
                          follow=True)
    assert response.status_code == 200
    assert "Draft article saved for audience internal" in response.content.decode()
    assert status_of(mine) == ("resolved", acme.agent.pk)
    assert not IngestJob.objects.filter(tenant=acme.tenant).exists()  # nothing published by resolving
    owner = staff_client(acme.owner)
    assert owner.post(f"{URL}{mine.pk}/article/", {"question": ACME_Q, "answer": "Refunded the duplicate charge.",
                                                   "audience": "customer", "action": "publish"}).status_code == 302
    job = IngestJob.objects.get(tenant=acme.tenant)
    assert (job.source_type, job.audience, job.created_by_id) == ("ticket", "customer", acme.owner.pk)
    with tenant_context(acme.tenant.id):
        assert Escalation.objects.get(pk=mine.pk).knowledge_job_id == job.pk


def test_trace_viewer_is_readable_and_scoped(acme: Any, globex: Any) -> None:
    trace = trace_make(acme.tenant, cost="0.0042", stage_ms={"rewrite": 0.4, "cache": 3.1, "retrieve": 61.5,
                                                             "generate": 812.0, "citations": 9.0}, feedback=-1)
    hit = trace_make(acme.tenant, cache_hit=True, feedback=-1)
    theirs = trace_make(globex.tenant, question="globex secret formula?")
    agent = staff_client(acme.agent)
    page = agent.get(f"/admin/answering/trace/{trace.pk}/change/").content.decode()
    for expected in ("retrieve", "61.5", "generate", "812.0", "886.0",  # stages and their total
                     "confident enough", "0.8000", "rerank",  # gate score and kind
                     "$0.004200", "Generation"):  # cost and the triage category
        assert expected in page, expected
    assert "yes — " in agent.get(f"/admin/answering/trace/{hit.pk}/change/").content.decode()
    assert agent.get(f"/admin/answering/trace/{theirs.pk}/change/").status_code == 404
    listing = agent.get("/admin/answering/trace/?triage=cache").content.decode()
    assert f"/admin/answering/trace/{hit.pk}/change/" in listing
    assert f"/admin/answering/trace/{trace.pk}/change/" not in listing
    assert "globex secret formula" not in agent.get("/admin/answering/trace/").content.decode()
    with tenant_context(acme.tenant.id):
        assert Trace.objects.filter(tenant=acme.tenant).count() == 2


def test_autocomplete_offers_only_the_users_tenants(acme: Any, queue: tuple[Escalation, Escalation]) -> None:
    agent = staff_client(acme.agent, "view_escalation", "change_escalation", "view_tenant")
    url = "/admin/autocomplete/?app_label=answering&model_name=escalation&field_name={}&term="
    tenants = agent.get(url.format("tenant")).json()["results"]
    assert [t["text"] for t in tenants] == ["acme"]
    # users are not the agent's to browse: the user admin refuses without its own permission
    assert agent.get(url.format("assignee")).status_code == 403
