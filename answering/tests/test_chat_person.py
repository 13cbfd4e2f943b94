"""Issue 48 through Django's test client: "talk to a person" under an answer and after a
thumbs-down (the abstention's escalation and follow-up page, with the answer's trace), fenced
code rendered as code, and the widget's notice on a site that is not allowed to frame it.
The browser half is test_chat_conversation_browser.py."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from answering.chat.render import answer_html
from answering.chat.tokens import feedback_ticket_issue
from answering.models import Escalation, Trace
from answering.tests.chat_helpers import ask_and_stream, done_of
from answering.tests.test_chat import last_trace, signed_in, ticket_in
from conftest import Cast
from tenants import actions
from tenants.models import Tenant
from tenants.rls import tenant_context

ANSWERED = "What does error PL-4031 mean?"


def _turn_in(done: str) -> str:
    match = re.search(r'name="turn" value="([0-9a-f]{12})"', done)
    assert match, done
    return match.group(1)


def _escalations(tenant: Tenant) -> list[Escalation]:
    with tenant_context(tenant.id):
        return list(Escalation.objects.filter(tenant=tenant).select_related("trace"))


# -- talk to a person ----------------------------------------------------------------------------

@pytest.mark.django_db
def test_an_answer_offers_a_person_who_gets_the_answers_trace(client: Client, demo_corpus: Any) -> None:
    paylane = Tenant.objects.get(slug="paylane")
    done = done_of(ask_and_stream(client, "paylane", ANSWERED))
    trace = last_trace(paylane)
    assert trace.action == Trace.Action.ANSWERED
    assert 'hx-post="/t/paylane/person"' in done and "Talk to a person" in done
    ticket, turn = ticket_in(done), _turn_in(done)

    response = client.post("/t/paylane/person", {"ticket": ticket, "turn": turn}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    [escalation] = _escalations(paylane)
    assert escalation.trace_id == trace.pk and escalation.reason == Escalation.Reason.ASKER_REQUEST
    assert escalation.question == ANSWERED and escalation.status == Escalation.Status.OPEN
    body = response.content.decode()
    # The abstention's notice: the private follow-up page and the optional email.
    assert f'href="/t/paylane/f/{escalation.public_id}/"' in body and 'name="email"' in body
    assert f'id="contact-{turn}"' in body and f"E-{escalation.pk}" not in body
    with tenant_context(paylane.id):
        assert Trace.objects.get(pk=trace.pk).action == Trace.Action.ANSWERED  # it was answered; a person follows

    again = client.post("/t/paylane/person", {"ticket": ticket, "turn": turn}, HTTP_HX_REQUEST="true")
    assert again.status_code == 200 and escalation.public_id in again.content.decode()
    assert len(_escalations(paylane)) == 1, "asking twice is one escalation"


@pytest.mark.django_db
def test_a_member_asking_for_a_person_leaves_their_email_without_a_form(demo_corpus: Any) -> None:
    paylane = Tenant.objects.get(slug="paylane")
    member = get_user_model().objects.create_user("paylane-person", email="ana@paylane.test", password="pw")
    actions.membership_grant(tenant=paylane, user=member, role="agent", audience_slugs=["public"])
    client = signed_in(member)
    done = done_of(ask_and_stream(client, "paylane", ANSWERED))
    response = client.post("/t/paylane/person", {"ticket": ticket_in(done), "turn": _turn_in(done)})
    assert response.status_code == 200 and "ana@paylane.test" in response.content.decode()
    assert 'name="email"' not in response.content.decode()
    assert [e.contact_email for e in _escalations(paylane)] == ["ana@paylane.test"]


@pytest.mark.django_db
def test_another_tenants_trace_is_a_404_and_escalates_nothing(client: Client, demo_corpus: Any, acme: Cast) -> None:
    paylane = Tenant.objects.get(slug="paylane")
    done = done_of(ask_and_stream(client, "paylane", ANSWERED))
    trace = last_trace(paylane)
    # PayLane's ticket on Acme's page: issued for another tenant.
    assert client.post("/t/acme/person", {"ticket": ticket_in(done)}).status_code == 404
    # A ticket validly signed for Acme that names PayLane's trace: the trace is not Acme's.
    forged = feedback_ticket_issue(tenant_id=acme.tenant.id, trace_id=trace.pk)
    assert client.post("/t/acme/person", {"ticket": forged}).status_code == 404
    assert client.post("/t/acme/embed/person", {"ticket": forged}).status_code == 404  # no embed ticket either
    assert client.post("/t/paylane/person", {"ticket": "made-up"}).status_code == 404
    assert _escalations(paylane) == [] and _escalations(acme.tenant) == []


@pytest.mark.django_db
def test_a_trace_asked_with_wider_audiences_is_a_404_for_a_public_visitor(client: Client, demo_corpus: Any) -> None:
    paylane = Tenant.objects.get(slug="paylane")
    staff = get_user_model().objects.create_user("paylane-person-staff", password="pw")
    actions.membership_grant(tenant=paylane, user=staff, role="agent", audience_slugs=["public", "internal"])
    done = done_of(ask_and_stream(signed_in(staff), "paylane", "What discount can we give a small agency?"))
    assert client.post("/t/paylane/person", {"ticket": ticket_in(done)}).status_code == 404
    assert _escalations(paylane) == []


@pytest.mark.django_db
def test_a_thumbs_down_brings_the_person_forward_and_a_thumbs_up_does_not(client: Client, demo_corpus: Any) -> None:
    done = done_of(ask_and_stream(client, "paylane", ANSWERED))
    ticket, turn = ticket_in(done), _turn_in(done)
    down = client.post("/t/paylane/feedback", {"ticket": ticket, "turn": turn, "vote": "-1"}).content.decode()
    assert "Thanks" in down and f'id="person-{turn}"' in down and 'hx-swap-oob="outerHTML"' in down
    assert "person-offer" in down and "Talk to a person" in down and ticket in down
    up = client.post("/t/paylane/feedback", {"ticket": ticket, "turn": turn, "vote": "1"}).content.decode()
    assert "glad it helped" in up and "person" not in up
    odd = client.post("/t/paylane/feedback", {"ticket": ticket, "turn": "x\" onclick=\"", "vote": "-1"})
    assert odd.status_code == 200 and "onclick" not in odd.content.decode()  # a turn id is only ever ours


# -- fenced code -----------------------------------------------------------------------------------

def test_a_fenced_block_becomes_escaped_code_and_its_brackets_stay_brackets() -> None:
    sources = [{"number": 1, "title": "Idempotent requests"}]
    text = ("Send the header [1]:\n\n```bash\ncurl -H \"Idempotency-Key: <uuid>\" -d items[1]=x\n```\n"
            "Keys last 48 hours [1].\n~~~\n<script>alert(1)</script>\n")
    html = answer_html(text=text, sources=sources, turn_id="abc")
    assert "```" not in html and "~~~" not in html
    assert ('<pre class="code"><code class="language-bash">curl -H &quot;Idempotency-Key: &lt;uuid&gt;&quot; '
            "-d items[1]=x</code></pre>") in html
    assert html.count('class="marker"') == 2  # the two in prose; `items[1]` in code is no citation
    assert "<script>" not in html and "<pre class=\"code\"><code>&lt;script&gt;" in html  # unclosed: code to the end
    assert answer_html(text="No code here [1].", sources=sources, turn_id="abc").count("<pre") == 0
    # As the offline answerer quotes a listing: cited after its closing fence; inline code too.
    quoted = answer_html(text="Send the `Idempotency-Key` header:\n```\ncurl -d a=1\n``` [1]\nDone.",
                         sources=sources, turn_id="abc")
    assert "`" not in quoted and "<code>Idempotency-Key</code>" in quoted
    assert '<pre class="code"><code>curl -d a=1</code></pre><a class="marker"' in quoted


# -- the widget on a site not (yet) allowed ------------------------------------------------------

@pytest.mark.django_db
def test_an_origin_not_allowed_gets_a_notice_naming_it_and_where_to_allow_it(client: Client, acme: Cast) -> None:
    Tenant.objects.filter(pk=acme.tenant.pk).update(embed_origins="https://help.acme.test")
    response = client.get("/t/acme/embed/", {"origin": "https://shop.example:8443"}, HTTP_SEC_FETCH_DEST="iframe")
    body = response.content.decode()
    assert response.status_code == 403
    assert response["Content-Security-Policy"].endswith("; frame-ancestors https://shop.example:8443")
    assert "<code>https://shop.example:8443</code>" in body and "Embed origins" in body
    assert 'id="question"' not in body and "X-Embed-Ticket" not in body  # nothing of the chat itself
    # Without embed.js's parameter, the Referer names the framing page.
    by_referer = client.get("/t/acme/embed/", HTTP_REFERER="https://shop.example/checkout?x=1")
    assert by_referer.status_code == 403 and "<code>https://shop.example</code>" in by_referer.content.decode()
    # The allowed origin, an unreadable claim or a visit in a tab: the chat, framable only as listed.
    for params, dest in (({"origin": "https://help.acme.test"}, "iframe"),
                         ({"origin": "https://a.test\nhttps://b.test"}, "iframe"),
                         ({"origin": "javascript:alert(1)"}, "iframe"),
                         ({"origin": "https://shop.example"}, "document"),
                         ({}, "iframe")):
        chat = client.get("/t/acme/embed/", params, headers={"Sec-Fetch-Dest": dest})
        assert chat.status_code == 200 and 'id="question"' in chat.content.decode(), params
        assert chat["Content-Security-Policy"].endswith("; frame-ancestors https://help.acme.test"), params
