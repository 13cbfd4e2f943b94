"""The embedded chat without a browser (docs/decisions/0054): framing headers, cookie-free
requests, customer tokens refused when expired, forged or another tenant's, the admin's fields.
The browser half (a host page on another loopback port) is test_embed_browser.py."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import Permission
from django.core import signing
from django.test import Client

from answering.chat import embed
from conftest import Cast
from tenants.embed import (OriginInvalid, TokenRefused, customer_token_read, customer_token_sign,
                           embed_origins_parse)
from tenants.models import Tenant

SECRET = "acme-embed-secret-for-tests"
CONVERSATION = "0f" * 16


def _token(slug: str = "acme", audiences: tuple[str, ...] = ("customer",), ttl: int = 600,
           secret: str = SECRET) -> str:
    return customer_token_sign(secret=secret, tenant_slug=slug, audiences=list(audiences),
                               expires_at=int(time.time()) + ttl)


@pytest.fixture
def embeddable(acme: Cast, globex: Cast) -> tuple[Cast, Cast]:
    Tenant.objects.filter(pk=acme.tenant.pk).update(
        embed_origins="https://help.acme.test\nhttp://127.0.0.1:8123", embed_secret=SECRET)
    Tenant.objects.filter(pk=globex.tenant.pk).update(embed_secret="globex-secret")
    return acme, globex


# -- the token a tenant's server signs ---------------------------------------------------------

def test_a_valid_customer_token_grants_customer_and_public() -> None:
    granted = customer_token_read(token=_token(), tenant_slug="acme", secret=SECRET)
    assert granted.audiences == ("customer", "public")


# Signed when the test runs, not when it is collected: a suite longer than a token's ten
# minutes would otherwise see every token expired.
@pytest.mark.parametrize("make, why", [
    (lambda: _token(ttl=-5), "expired"),
    (lambda: _token(secret="not-the-secret"), "bad signature"),
    (lambda: _token(slug="globex"), "another tenant"),
    (lambda: _token(ttl=2 * 3600), "longer than"),
    (lambda: _token(audiences=("customer", "internal")), "only"),
    (lambda: "acme|customer|99999999999", "malformed"),
    (lambda: _token().replace("|customer|", "|internal|"), "bad signature"),
])
def test_bad_customer_tokens_are_refused(make: Callable[[], str], why: str) -> None:
    token = make()
    with pytest.raises(TokenRefused, match=why):
        customer_token_read(token=token, tenant_slug="acme", secret=SECRET)


def test_no_secret_signs_nothing() -> None:
    with pytest.raises(TokenRefused, match="no embed secret"):
        customer_token_read(token=_token(secret=""), tenant_slug="acme", secret="")


# -- origins -----------------------------------------------------------------------------------

def test_origins_are_normalised() -> None:
    text = " HTTPS://Help.Acme.test/ \n\nhttp://127.0.0.1:8123\nhttps://help.acme.test\nhttp://[::1]:9000"
    assert embed_origins_parse(text=text) == ["https://help.acme.test", "http://127.0.0.1:8123", "http://[::1]:9000"]


@pytest.mark.parametrize("line, why", [
    ("https://acme.test/help", "no path"), ("https://*.acme.test", "wildcards"), ("*", "wildcards"),
    ("ftp://acme.test", "scheme"), ("acme.test", "scheme"), ("https://", "host"),
    ("https://acme.test:99999", "port"), ("https://user:pw@acme.test", "user name"),
    ("https://acme.test?x=1", "query"),
])
def test_bad_origins_name_their_line(line: str, why: str) -> None:
    with pytest.raises(OriginInvalid, match=f"Line 2 .*{why}"):
        embed_origins_parse(text=f"https://ok.acme.test\n{line}")


# -- framing -----------------------------------------------------------------------------------

@pytest.mark.django_db
def test_only_listed_origins_may_frame_the_embedded_chat(client: Client, embeddable: Any) -> None:
    acme, globex = embeddable
    response = client.get("/t/acme/embed/")
    assert response.status_code == 200
    # The directive closes the chat pages' strict policy (answering/chat/policy.py, test_chat_policy.py).
    assert response["Content-Security-Policy"].endswith("; frame-ancestors https://help.acme.test http://127.0.0.1:8123")
    assert "X-Frame-Options" not in response
    response = client.get("/t/globex/embed/")  # no origins listed: nowhere
    assert response["Content-Security-Policy"].endswith("; frame-ancestors 'none'")
    for url in ("/t/acme/", "/", "/admin/login/", "/t/acme/f/nothing/"):
        response = client.get(url)
        assert response["X-Frame-Options"] == "DENY", url
        assert "frame-ancestors" not in response.get("Content-Security-Policy", ""), url


@pytest.mark.django_db
def test_the_embedded_chat_sets_and_needs_no_cookie(embeddable: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    page = client.get("/t/acme/embed/")
    assert page.cookies == {} and "Set-Cookie" not in page
    body = page.content.decode()
    assert "csrfmiddlewaretoken" not in body and 'data-embed="1"' in body
    ticket = body.split('"X-Embed-Ticket": "')[1].split('"')[0]
    fresh = Client(enforce_csrf_checks=True)  # no cookie jar carried over: none was set anyway
    response = fresh.post("/t/acme/embed/ask", {"question": "How do refunds work?", "history": "[]", "conversation_id": CONVERSATION},
                          headers={"X-Embed-Ticket": ticket})
    assert response.status_code == 200 and response.cookies == {}
    stream = parse_qs(urlsplit(response.content.decode().split('sse-connect="')[1].split('"')[0]
                               .replace("&amp;", "&")).query)
    granted = embed.stream_grant_read(grant=stream["grant"][0], tenant=embeddable[0].tenant,
                                      pending_id=stream["id"][0])
    assert granted == ["public"]
    # The cookie page keeps its CSRF check.
    assert fresh.post("/t/acme/ask", {"question": "How do refunds work?", "history": "[]", "conversation_id": CONVERSATION}).status_code == 403


@pytest.mark.django_db
def test_a_customer_token_reads_customer_and_bad_ones_are_refused(client: Client, embeddable: Any) -> None:
    page = client.get("/t/acme/embed/", {"token": _token()})
    assert page.status_code == 200 and 'data-audiences="customer,public"' in page.content.decode()
    for bad in (_token(ttl=-1), _token(secret="forged"), _token(slug="globex", secret="globex-secret"),
                _token(audiences=("internal",))):
        refused = client.get("/t/acme/embed/", {"token": bad})
        assert refused.status_code == 403 and "data-audiences" not in refused.content.decode()
        assert "X-Embed-Ticket" not in refused.content.decode()
        assert "; frame-ancestors " in refused["Content-Security-Policy"]


@pytest.mark.django_db
def test_tickets_and_grants_are_bound_to_their_tenant(client: Client, embeddable: Any) -> None:
    acme, globex = embeddable
    acme_ticket = embed.embed_ticket_issue(tenant=acme.tenant, audiences=["customer", "public"],
                                           expires_at=int(time.time()) + 60)
    ask = {"question": "How do refunds work?", "history": "[]", "conversation_id": CONVERSATION}
    assert client.post("/t/globex/embed/ask", ask, headers={"X-Embed-Ticket": acme_ticket}).status_code == 400
    assert client.post("/t/acme/embed/ask", ask, headers={"X-Embed-Ticket": "forged:ticket"}).status_code == 400
    assert client.post("/t/acme/embed/ask", ask).status_code == 400
    expired = embed.embed_ticket_issue(tenant=acme.tenant, audiences=["public"], expires_at=int(time.time()) - 1)
    assert client.post("/t/acme/embed/ask", ask, headers={"X-Embed-Ticket": expired}).status_code == 400
    turn = client.post("/t/acme/embed/ask", ask, headers={"X-Embed-Ticket": acme_ticket}).content.decode()
    query = parse_qs(urlsplit(turn.split('sse-connect="')[1].split('"')[0].replace("&amp;", "&")).query)
    pending, grant = query["id"][0], query["grant"][0]
    # Another tenant's page, another question's id, or a grant made up with more audiences: 404.
    assert client.get("/t/globex/embed/stream", {"id": pending, "grant": grant}).status_code == 404
    other = client.post("/t/acme/embed/ask", ask, headers={"X-Embed-Ticket": acme_ticket}).content.decode()
    other_id = parse_qs(urlsplit(other.split('sse-connect="')[1].split('"')[0].replace("&amp;", "&")).query)["id"][0]
    assert client.get("/t/acme/embed/stream", {"id": other_id, "grant": grant}).status_code == 404
    forged = signing.dumps({"t": acme.tenant.id, "a": ["internal"], "p": "x"}, salt="not-the-salt")
    assert client.get("/t/acme/embed/stream", {"id": pending, "grant": forged}).status_code == 404
    assert client.post("/t/globex/embed/feedback", {"ticket": "x", "vote": "1"},
                       headers={"X-Embed-Ticket": acme_ticket}).status_code == 404
    assert client.post("/t/globex/embed/f/anything/contact", {"email": "a@example.com"},
                       headers={"X-Embed-Ticket": acme_ticket}).status_code == 404
    assert client.get("/t/nobody/embed/").status_code == 404


# -- the admin ---------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_tenant_page_shows_the_snippet_validates_origins_and_regenerates_the_secret(embeddable: Any) -> None:
    acme, globex = embeddable
    owner = Client()
    acme.owner.user_permissions.set(Permission.objects.filter(codename__in=["view_tenant", "change_tenant"]))
    owner.force_login(acme.owner)
    url = f"/admin/tenants/tenant/{acme.tenant.id}/change/"
    page = owner.get(url).content.decode()
    assert 'data-tenant=&quot;acme&quot; async&gt;&lt;/script&gt;' in page and "/embed.js" in page
    assert SECRET not in page and 'name="embed_secret"' not in page and 'name="embed_origins"' in page
    assert SECRET not in owner.get("/admin/tenants/tenant/").content.decode()
    bad = owner.post(url, {"slug": "acme", "name": "Acme", "embed_origins": "https://ok.acme.test\nhttps://acme.test/x"})
    assert bad.status_code == 200 and "Line 2 (&#x27;https://acme.test/x&#x27;)" in bad.content.decode()
    assert Tenant.objects.get(pk=acme.tenant.pk).embed_origins.startswith("https://help.acme.test")
    done = owner.post(url, {"slug": "acme", "name": "Acme", "listed": "on", "embed_origins": "HTTPS://Shop.Acme.test/",
                            "regenerate_embed_secret": "on"}, follow=True)
    tenant = Tenant.objects.get(pk=acme.tenant.pk)
    assert tenant.embed_origins == "https://shop.acme.test" and tenant.listed
    assert tenant.embed_secret not in ("", SECRET) and tenant.embed_secret in done.content.decode()
    assert tenant.embed_secret not in owner.get(url).content.decode()  # shown once
    assert owner.get(f"/admin/tenants/tenant/{globex.tenant.id}/change/").status_code == 404
    agent = Client()
    acme.agent.user_permissions.set(Permission.objects.filter(codename__in=["view_tenant", "change_tenant"]))
    agent.force_login(acme.agent)
    seen = agent.get(url).content.decode()
    assert 'name="embed_origins"' not in seen and tenant.embed_secret not in seen  # an agent reads, never writes
    agent.post(url, {"slug": "acme", "name": "Acme", "embed_origins": "https://evil.test", "regenerate_embed_secret": "on"})
    assert Tenant.objects.get(pk=acme.tenant.pk).embed_origins == "https://shop.acme.test"
    outsider = Client()
    acme.outsider.user_permissions.set(Permission.objects.filter(codename__in=["view_tenant", "change_tenant"]))
    outsider.force_login(acme.outsider)
    assert outsider.get(url).status_code == 404


def test_the_readme_server_example_signs_a_token_the_widget_accepts() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Embedding in three lines", 1)[1]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(example.strip().splitlines()) == 5
    scope: dict[str, Any] = {"EMBED_SECRET": SECRET}
    exec(example, scope)  # noqa: S102 (our own README)
    granted = customer_token_read(token=scope["token"], tenant_slug="paylane", secret=SECRET)
    assert granted.audiences == ("customer", "public")


@pytest.mark.django_db
def test_a_customer_token_reads_the_customer_audience_and_an_anonymous_visitor_does_not(paylane: Tenant) -> None:
    from answering.tests.chat_helpers import done_of, read_events, stream_url

    Tenant.objects.filter(pk=paylane.pk).update(embed_secret=SECRET)
    question = {"question": "What uptime does PayLane guarantee?", "history": "[]",
                "conversation_id": CONVERSATION}

    def answer(query: dict[str, str]) -> str:
        client = Client(enforce_csrf_checks=True)
        page = client.get("/t/paylane/embed/", query).content.decode()
        ticket = page.split('"X-Embed-Ticket": "')[1].split('"')[0]
        turn = client.post("/t/paylane/embed/ask", question, headers={"X-Embed-Ticket": ticket},
                           REMOTE_ADDR="198.51.100.9")
        return done_of(read_events(client.get(stream_url(turn.content))))

    assert "99.95" in answer({"token": _token(slug="paylane")})
    assert "99.95" not in answer({})
