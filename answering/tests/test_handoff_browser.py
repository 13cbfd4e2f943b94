"""In Chromium, both sides of the handoff against a uvicorn of its own (tasks run inline, mail
goes to a real SMTP server on loopback): the customer abstains, leaves an email and keeps the
follow-up link; the agent replies and resolves in the admin; the customer's chat page shows a
badge, the follow-up page shows the reply, and the email arrived."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from playwright.sync_api import expect

from answering.models import Escalation
from answering.tests.console_browser_login import login
from answering.tests.handoff_servers import Mailbox, free_port
from answering.tests.test_console_browser import in_thread
from config.liveserver import serve
from tenants import actions
from tenants.rls import tenant_context

QUESTION = "Can I pay the Quibble invoice with Zorblat gift cards?"
REPLY = "Yes: Zorblat gift cards work for invoices under 500 euros; enter the code on the payment page."
ASKER = "cara@example.com"
PASSWORD = "pw-browser-handoff"


@dataclass
class World:
    agent: str
    tenant_id: int


@pytest.fixture(scope="module")
def mailbox() -> Iterator[Mailbox]:
    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=free_port())
    controller.start()
    box.port = controller.port
    try:
        yield box
    finally:
        controller.stop()


@pytest.fixture(scope="module")
def handoff_url(django_db_setup: Any, mailbox: Mailbox) -> Iterator[str]:
    with serve({"EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": str(mailbox.port),
                "TASKS_BACKEND": "django_tasks.backends.immediate.ImmediateBackend",
                "CHAT_RATE_LIMIT_PER_ADDRESS": "100000"}) as url:
        yield url


def _make_world() -> World:
    tenant, _ = actions.tenant_get_or_create(slug="brw-handoff", name="Quibble")
    user, _ = get_user_model().objects.get_or_create(username="brw-handoff-agent")
    user.is_staff, user.email = True, "agent@quibble.test"
    user.set_password(PASSWORD)
    user.save()
    user.user_permissions.set(Permission.objects.filter(codename__in=["view_escalation", "change_escalation"]))
    actions.membership_grant(tenant=tenant, user=user, role="agent", audience_slugs=["public", "customer"])
    return World(agent=user.username, tenant_id=tenant.id)


@pytest.fixture(scope="module")
def world(django_db_setup: Any, django_db_blocker: Any) -> World:
    return in_thread(django_db_blocker, _make_world)


def test_the_customer_and_the_agent_close_the_loop(world: World, handoff_url: str, chromium: Any,
                                                   mailbox: Mailbox, django_db_blocker: Any) -> None:
    customer = chromium.new_context(viewport={"width": 1280, "height": 860}).new_page()
    customer.set_default_timeout(30_000)
    customer.goto(f"{handoff_url}/t/brw-handoff/")
    customer.fill("#question", QUESTION)
    customer.press("#question", "Enter")
    notice = customer.locator("#turns .turn .escalation-notice")
    expect(notice).to_contain_text("support team", timeout=120_000)  # the first answer loads the model
    link = notice.locator("a.followup-link")
    followup_path = link.get_attribute("href")
    public_id = link.get_attribute("data-followup-id")
    assert followup_path == f"/t/brw-handoff/f/{public_id}/"
    notice.get_by_label("Your email (optional): we'll reply here and by email").fill(ASKER)
    notice.get_by_role("button", name="Send me the reply").click()
    expect(notice.locator(".followup-contact-result")).to_contain_text("we will also reply by email")
    stored = customer.evaluate("window.localStorage.getItem('answerdesk.followups.brw-handoff')")
    assert public_id in stored
    assert mailbox.to("agent@quibble.test"), "the agent was told of the new escalation"

    def escalation_id() -> int:
        with tenant_context(world.tenant_id):
            return Escalation.objects.get(public_id=public_id).pk

    pk = in_thread(django_db_blocker, escalation_id)
    agent = chromium.new_context(viewport={"width": 1280, "height": 860}).new_page()
    agent.set_default_timeout(30_000)
    login(agent, handoff_url, world.agent, PASSWORD, "/admin/answering/escalation/")
    agent.get_by_role("link", name=str(pk), exact=True).click()
    agent.wait_for_url(f"**/admin/answering/escalation/{pk}/change/")
    expect(agent.get_by_text(ASKER).first).to_be_visible()
    agent.get_by_label("Reply to the asker").fill(REPLY)
    agent.get_by_label("Resolve with this reply").check()
    agent.get_by_role("button", name="Send reply").click()
    expect(agent.locator("ul.messagelist")).to_contain_text("emailed to the asker")
    expect(agent.locator(".escalation-thread")).to_contain_text(REPLY)

    customer.goto(f"{handoff_url}/t/brw-handoff/")
    badge = customer.locator("#followup-badge a")
    expect(badge).to_have_text("A reply to your question has arrived")
    badge.click()
    customer.wait_for_url(f"**{followup_path}")
    expect(customer.locator(".message-agent")).to_contain_text(REPLY)
    expect(customer.locator("#followup-status")).to_have_text("answered")
    [mail] = mailbox.to(ASKER)
    assert REPLY in mail.get_payload() and followup_path in mail.get_payload()

    customer.goto(f"{handoff_url}/t/brw-handoff/")
    customer.wait_for_timeout(1000)
    assert customer.locator("#followup-badge a").count() == 0  # read on the follow-up page: no badge
