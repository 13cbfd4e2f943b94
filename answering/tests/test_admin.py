"""Agents work their own tenant's escalations in the admin; other tenants' are 404s."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from answering.models import Escalation
from answering.pipeline.flow import answer
from tenants.models import Tenant
from tenants.rls import tenant_context


def staff_client(user: Any, *codenames: str) -> Client:
    user.is_staff = True
    user.save()
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_agent_resolves_own_escalation_and_cannot_open_another_tenants(demo_corpus: Any) -> None:
    from conftest import _make_cast

    paylane, helpwise = Tenant.objects.get(slug="paylane"), Tenant.objects.get(slug="helpwise")
    mine = answer(tenant=paylane, audiences=["public"], question="What is the capital of Mongolia?")
    theirs = answer(tenant=helpwise, audiences=["public"], question="What is the capital of Mongolia?")
    cast = _make_cast("paylane")  # owner/agent/outsider memberships on paylane
    agent = staff_client(cast.agent, "view_escalation", "change_escalation")
    listing = agent.get("/admin/answering/escalation/")
    assert listing.status_code == 200
    assert f'/admin/answering/escalation/{mine.escalation_id}/change/'.encode() in listing.content
    assert f'/admin/answering/escalation/{theirs.escalation_id}/change/'.encode() not in listing.content
    assert agent.get(f"/admin/answering/escalation/{theirs.escalation_id}/change/").status_code in (302, 404)
    response = agent.post("/admin/answering/escalation/", {
        "action": "mark_resolved", "_selected_action": [mine.escalation_id, theirs.escalation_id]})
    assert response.status_code == 302
    assert mine.escalation_id is not None and theirs.escalation_id is not None
    with tenant_context(paylane.id):
        assert Escalation.objects.get(pk=mine.escalation_id).status == "resolved"
    with tenant_context(helpwise.id):
        assert Escalation.objects.get(pk=theirs.escalation_id).status == "open"
    outsider = staff_client(cast.outsider, "view_escalation")
    assert f"/{mine.escalation_id}/change/".encode() not in outsider.get("/admin/answering/escalation/").content
