"""Web sources in the console and on the task worker (issue 19 item 3): a tenant admin adds a
source and syncs it now; nobody sees or runs another tenant's source (404); an agent sees
their tenant's sources but runs none; scheduled runs chain on the worker with run_after."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from answering.tests.console_data import staff_client
from conftest import Cast
from corpus.models import WebPage, WebSource
from corpus.tests.websync_site import Page, Site, html, serve
from corpus.sources.websync.sources import websource_save
from corpus.sources.websync.tasks import websync_task, websync_task_run
from tenants.models import Audience
from tenants.rls import tenant_context

pytestmark = pytest.mark.django_db
PERMISSIONS = ("view_websource", "add_websource", "change_websource", "view_webpage")
IMMEDIATE = override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}})


@pytest.fixture
def loopback(settings: Any) -> None:
    settings.WEBSYNC_ALLOW_PRIVATE_ADDRESSES = True
    settings.WEBSYNC_DELAY_SECONDS = 0.0


def source_of(cast: Cast, url: str, *, schedule: str = "manual") -> WebSource:
    audience = Audience.objects.get(tenant=cast.tenant, slug="public")
    return websource_save(tenant=cast.tenant, audience=audience,
                          values={"start_url": url, "kind": "start", "page_limit": 10, "schedule": schedule,
                                  "name": f"{cast.tenant.slug} help"})


def reload(cast: Cast, source: WebSource) -> WebSource:
    with tenant_context(cast.tenant.id):
        return WebSource.objects.get(tenant=cast.tenant, pk=source.pk)


def queued_for(source: WebSource) -> list[DBTaskResult]:
    return [r for r in DBTaskResult.objects.filter(task_path=websync_task.module_path, status="READY")
            if r.args_kwargs["kwargs"].get("source_id") == source.pk]


def test_a_tenant_admin_adds_a_source_and_syncs_it_now(acme: Cast, loopback: None, encoder: Any,
                                                       django_capture_on_commit_callbacks: Any) -> None:
    site = Site()
    site.pages["/"] = Page(body=html("Home", "Anvils ship in crates of twelve."))
    owner = staff_client(acme.owner, *PERMISSIONS)
    with serve(site):
        response = owner.post("/admin/corpus/websource/add/", {
            "tenant": acme.tenant.pk, "audience": acme.public_id, "name": "Help", "start_url": f"{site.base}/",
            "kind": "start", "include_patterns": "", "exclude_patterns": "", "page_limit": 10,
            "schedule": "manual"})
        assert response.status_code == 302, response.content.decode()[:3000]
        with tenant_context(acme.tenant.id):
            source = WebSource.objects.get(tenant=acme.tenant, name="Help")
        with IMMEDIATE, django_capture_on_commit_callbacks(execute=True):
            owner.post("/admin/corpus/websource/", {"action": "sync_now", "_selected_action": [source.pk]})
    source = reload(acme, source)
    assert source.last_report is not None
    assert source.last_status == "succeeded" and source.last_report["added"] == 1
    assert site.requests["/"] == 1
    listing = owner.get("/admin/corpus/websource/").content.decode()
    assert "1 fetched" in listing and "1 added" in listing
    assert owner.get(f"/admin/corpus/websource/{source.pk}/change/").status_code == 200
    pages = owner.get("/admin/corpus/webpage/").content.decode()
    assert f"{site.base}/" in pages


def test_a_private_start_url_is_refused_by_the_form(acme: Cast, settings: Any) -> None:
    settings.WEBSYNC_ALLOW_PRIVATE_ADDRESSES = False
    owner = staff_client(acme.owner, *PERMISSIONS)
    response = owner.post("/admin/corpus/websource/add/", {
        "tenant": acme.tenant.pk, "audience": acme.public_id, "start_url": "http://169.254.169.254/latest/",
        "kind": "start", "page_limit": 10, "schedule": "manual"})
    assert response.status_code == 200
    assert "a private, loopback or link-local address" in response.content.decode()
    with tenant_context(acme.tenant.id):
        assert not WebSource.objects.filter(tenant=acme.tenant).exists()


def test_another_tenants_source_is_a_404_and_cannot_be_run(acme: Cast, globex: Cast, loopback: None,
                                                            django_capture_on_commit_callbacks: Any) -> None:
    theirs = source_of(globex, "http://127.0.0.1:9/")
    with tenant_context(globex.tenant.id):
        page = WebPage.objects.create(tenant=globex.tenant, source=theirs, url="http://127.0.0.1:9/x")
    for user in (acme.owner, acme.agent, acme.outsider):
        client = staff_client(user, *PERMISSIONS)
        assert client.get(f"/admin/corpus/websource/{theirs.pk}/change/").status_code == 404
        assert client.get(f"/admin/corpus/webpage/{page.pk}/change/").status_code == 404
        assert "globex help" not in client.get("/admin/corpus/websource/").content.decode()
        with django_capture_on_commit_callbacks(execute=True):
            client.post("/admin/corpus/websource/", {"action": "sync_now", "_selected_action": [theirs.pk]})
        form = {"audience": acme.public_id, "start_url": "http://127.0.0.1:9/", "kind": "start", "page_limit": 10,
                "schedule": "daily"}
        response = client.post(f"/admin/corpus/websource/{theirs.pk}/change/", form)
        # A tenant admin gets the 404 of a missing row; a member who may change nothing gets
        # the same 403 for any id, existing or not: neither confirms the row.
        nowhere = client.post("/admin/corpus/websource/999999/change/", form)
        assert response.status_code == nowhere.status_code == (404 if user == acme.owner else 403)
    assert reload(globex, theirs).last_status == "never" and queued_for(theirs) == []
    # Row-level security: acme's context does not see globex's rows at all.
    with tenant_context(acme.tenant.id):
        assert not WebSource.objects.filter(pk=theirs.pk).exists() and not WebPage.objects.exists()


def test_an_agent_sees_their_tenants_sources_but_neither_adds_nor_runs_them(
        acme: Cast, loopback: None, django_capture_on_commit_callbacks: Any) -> None:
    mine = source_of(acme, "http://127.0.0.1:9/")
    agent = staff_client(acme.agent, *PERMISSIONS)
    assert "acme help" in agent.get("/admin/corpus/websource/").content.decode()
    assert agent.get("/admin/corpus/websource/add/").status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        agent.post("/admin/corpus/websource/", {"action": "sync_now", "_selected_action": [mine.pk]})
    assert reload(acme, mine).last_status == "never" and queued_for(mine) == []


def test_a_scheduled_source_chains_its_runs_on_the_worker_with_run_after(
        acme: Cast, loopback: None, encoder: Any, django_capture_on_commit_callbacks: Any) -> None:
    site = Site()
    site.pages["/"] = Page(body=html("Home", "Rockets are returned within thirty days."))
    with serve(site):
        with django_capture_on_commit_callbacks(execute=True):
            source = source_of(acme, f"{site.base}/", schedule="daily")
        [first] = queued_for(source)
        due = reload(acme, source).next_run_at
        assert first.run_after == due and due <= timezone.now()
        # What the worker does when the time comes (db_worker runs READY tasks whose run_after has passed).
        with django_capture_on_commit_callbacks(execute=True):
            result = websync_task_run(tenant_id=acme.tenant.id, source_id=source.pk, due=due.isoformat())
        assert result["added"] == 1
        after = reload(acme, source)
        assert after.last_status == "succeeded" and after.next_run_at is not None
        assert dt.timedelta(hours=23) < after.next_run_at - timezone.now() <= dt.timedelta(days=1)
        assert [r.run_after for r in queued_for(source)] == [due, after.next_run_at]
        # The worker `make run` starts (db_worker) takes only tasks whose run_after has passed.
        ready = set(DBTaskResult.objects.ready().values_list("run_after", flat=True))
        assert due in ready and after.next_run_at not in ready
        # The first queued run, now stale (the chain moved on), does nothing.
        stale = websync_task_run(tenant_id=acme.tenant.id, source_id=source.pk, due=due.isoformat())
        assert stale == {"skipped": "a stale scheduled run: the schedule changed since it was queued"}
        assert site.requests["/"] == 1
        # Switched to manual: the chain ends (next_run_at cleared, the queued run is stale).
        audience = Audience.objects.get(tenant=acme.tenant, slug="public")
        websource_save(tenant=acme.tenant, audience=audience, source_id=source.pk,
                       values={"start_url": f"{site.base}/", "kind": "start", "page_limit": 10,
                               "schedule": "manual"})
        assert reload(acme, source).next_run_at is None


def test_a_source_writing_into_an_audience_the_agent_lacks_is_hidden_from_them(acme: Cast, loopback: None) -> None:
    internal = Audience.objects.get(tenant=acme.tenant, slug="internal")
    hidden = websource_save(tenant=acme.tenant, audience=internal,
                            values={"start_url": "http://127.0.0.1:9/", "kind": "start", "page_limit": 10,
                                    "schedule": "manual", "name": "staff wiki"})
    with tenant_context(acme.tenant.id):
        page = WebPage.objects.create(tenant=acme.tenant, source=hidden, url="http://127.0.0.1:9/wiki")
    agent = staff_client(acme.agent, *PERMISSIONS)  # public + customer
    assert "staff wiki" not in agent.get("/admin/corpus/websource/").content.decode()
    assert agent.get(f"/admin/corpus/websource/{hidden.pk}/change/").status_code == 404
    assert agent.get(f"/admin/corpus/webpage/{page.pk}/change/").status_code == 404
    assert "127.0.0.1:9/wiki" not in agent.get("/admin/corpus/webpage/").content.decode()
    owner = staff_client(acme.owner, *PERMISSIONS)  # holds internal
    assert "staff wiki" in owner.get("/admin/corpus/websource/").content.decode()
    assert "127.0.0.1:9/wiki" in owner.get("/admin/corpus/webpage/").content.decode()
