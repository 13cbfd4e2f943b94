"""The embedded chat: the chat page inside a tenant's own site, in an iframe (docs/decisions/0054).

What differs from the chat page (answering/chat/views.py), and why:
- Framing: only the tenant's `embed_origins` may frame these responses
  (`frame-ancestors`, nothing listed: 'none', inside the chat pages' strict
  Content-Security-Policy of answering/chat/policy.py); every other page of the site keeps
  `X-Frame-Options: DENY`.
- No cookies: in an iframe on another site the browser may send none (third-party cookie
  blocking; Django's SameSite=Lax cookies are not sent to cross-site frames anyway). So the
  embedded chat never reads the session or the CSRF cookie: who the visitor is comes from an
  *embed ticket*, signed here when the page is served and sent back with every POST
  (`X-Embed-Ticket`). It names the tenant, the audiences (public, or what the tenant's signed
  customer token granted) and an expiry. CSRF has nothing to forge here: no ambient
  credential rides along with a forged request.
- The stream: an EventSource sends no headers, so the stream URL carries, next to the one-time
  id, a *stream grant*: signed, bound to that id, and as short-lived as the id itself.
- The session is never consulted, even when the browser does send it (same site): an embedded
  visitor is anonymous to the server, whoever is signed in to the console in the same browser.
"""

from __future__ import annotations

import hashlib
import time
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from answering.chat import access, followup, views
from answering.chat.policy import with_page_policy
from answering.chat.language import in_tenant_language
from answering.language import in_active_language
from answering.chat.pending import PENDING_TTL_SECONDS, PendingForeign, PendingUnknown, pending_ask_claim
from answering.chat.stream import chat_events, failed_events
from answering.sse import EventStreamResponse
from tenants.embed import (OriginInvalid, TokenRefused, customer_token_read, embed_origins_parse,
                           frame_ancestors)
from tenants.models import Tenant

TICKET_SALT = "answerdesk.chat.embed.ticket"
GRANT_SALT = "answerdesk.chat.embed.grant"
# An anonymous visitor's ticket: longer than any sensible visit to one page.
ANONYMOUS_TICKET_SECONDS = 12 * 3600
TICKET_HEADER = "X-Embed-Ticket"


class TicketInvalid(Exception):
    """No, a forged, an expired or another tenant's ticket or grant."""


def framable(response: HttpResponse, *, tenant: Tenant) -> HttpResponse:
    """Only the tenant's own origins may frame this response; nothing listed: nobody."""
    with_page_policy(response, frame_ancestors=frame_ancestors(text=tenant.embed_origins))
    response["Cache-Control"] = "no-store"
    return response


def allowed_origins(text: str) -> list[str]:
    """The tenant's stored origins; unreadable (never saved so by the admin): none."""
    try:
        return embed_origins_parse(text=text)
    except OriginInvalid:
        return []


def embed_ticket_issue(*, tenant: Tenant, audiences: list[str], expires_at: int) -> str:
    return signing.dumps({"t": tenant.id, "a": audiences, "x": int(expires_at)}, salt=TICKET_SALT)


def embed_ticket_read(*, ticket: str, tenant: Tenant) -> list[str]:
    """The audiences the ticket grants on this tenant's embedded chat; TicketInvalid otherwise."""
    try:
        payload: dict[str, Any] = signing.loads(ticket, salt=TICKET_SALT, max_age=ANONYMOUS_TICKET_SECONDS)
    except signing.BadSignature as exc:
        raise TicketInvalid(str(exc)) from exc
    if payload.get("t") != tenant.id or int(payload.get("x", 0)) <= time.time():
        raise TicketInvalid("expired, or issued for another tenant")
    return [str(a) for a in payload["a"]]


def _pending_hash(pending_id: str) -> str:
    return hashlib.sha256(pending_id.encode()).hexdigest()[:32]


def stream_grant_issue(*, tenant: Tenant, audiences: list[str], pending_id: str) -> str:
    return signing.dumps({"t": tenant.id, "a": audiences, "p": _pending_hash(pending_id)}, salt=GRANT_SALT)


def stream_grant_read(*, grant: str, tenant: Tenant, pending_id: str) -> list[str]:
    try:
        payload: dict[str, Any] = signing.loads(grant, salt=GRANT_SALT, max_age=PENDING_TTL_SECONDS)
    except signing.BadSignature as exc:
        raise TicketInvalid(str(exc)) from exc
    if payload.get("t") != tenant.id or payload.get("p") != _pending_hash(pending_id):
        raise TicketInvalid("issued for another tenant or another question")
    return [str(a) for a in payload["a"]]


def _request_ticket(request: HttpRequest, tenant: Tenant) -> list[str]:
    return embed_ticket_read(ticket=request.headers.get(TICKET_HEADER, "") or request.POST.get("embed_ticket", ""),
                             tenant=tenant)


def _ticket_or_404(request: HttpRequest, tenant: Tenant, *, missing: str) -> list[str]:
    """The ticket's audiences; a missing, forged or expired ticket is `missing`, a 404."""
    try:
        return _request_ticket(request, tenant)
    except TicketInvalid as exc:
        raise Http404(missing) from exc


@lru_cache(maxsize=1)
def _script_text() -> str:
    path = finders.find("answerdesk/embed.js")
    if not path:
        raise Http404("No such page.")
    with open(str(path), encoding="utf-8") as handle:
        return handle.read()


@require_GET
def embed_script(request: HttpRequest) -> HttpResponse:
    """`/embed.js` at a stable address (the snippet outlives any hashed static name)."""
    response = HttpResponse(_script_text(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=300"
    response["Access-Control-Allow-Origin"] = "*"
    return response


def _host_origin(request: HttpRequest) -> str:
    """The origin of the page framing the chat, normalised: what embed.js says (`?origin=`), or
    else the Referer's origin; '' when neither reads as exactly one origin. A claim, not a
    proof: it only chooses between the chat (framable by the listed origins alone, whatever
    was claimed) and the notice below, which holds nothing to click or read but its advice."""
    if request.headers.get("Sec-Fetch-Dest") == "document":
        return ""  # opened in a tab, not framed: nothing is refused, so no notice
    claimed = request.GET.get("origin", "")
    if not claimed:
        referer = urlsplit(request.headers.get("Referer", ""))
        claimed = f"{referer.scheme}://{referer.netloc}" if referer.scheme and referer.netloc else ""
    if not claimed or len(claimed) > 300 or any(c.isspace() for c in claimed):
        return ""
    try:
        origins = embed_origins_parse(text=claimed)
    except OriginInvalid:
        return ""
    return origins[0] if len(origins) == 1 else ""


def _origin_refused(request: HttpRequest, *, tenant: Tenant, origin: str) -> HttpResponse:
    """The framing site is not on the tenant's list: instead of a frame the browser refuses
    blank ("refused to connect", issue 48), a notice the site's owner can read, naming their
    origin and where to allow it, framable by that origin only."""
    response = render(request, "chat/embed_refused.html", {"tenant": tenant, "origin": origin}, status=403)
    with_page_policy(response, frame_ancestors=f"frame-ancestors {origin}")
    response["Cache-Control"] = "no-store"
    return response


@require_GET
@xframe_options_exempt
@in_tenant_language
def embed_page(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    origin = _host_origin(request)
    if origin and origin not in allowed_origins(tenant.embed_origins):
        return _origin_refused(request, tenant=tenant, origin=origin)
    token = request.GET.get("token", "")
    audiences, expires_at = [access.PUBLIC], int(time.time()) + ANONYMOUS_TICKET_SECONDS
    if token:
        try:
            granted = customer_token_read(token=token, tenant_slug=tenant.slug, secret=tenant.embed_secret)
        except TokenRefused as exc:
            response = render(request, "chat/embed_refused.html", {"tenant": tenant, "reason": str(exc)}, status=403)
            return framable(response, tenant=tenant)
        audiences, expires_at = list(granted.audiences), granted.expires_at
    response = render(request, views.PAGE, {
        "tenant": tenant, "audiences": audiences, "embed": True,
        "embed_ticket": embed_ticket_issue(tenant=tenant, audiences=audiences, expires_at=expires_at),
        "history_turns": settings.ANSWER_HISTORY_TURNS})
    return framable(response, tenant=tenant)


@csrf_exempt  # no cookie is read: the ticket is the credential (module docstring)
@require_POST
@xframe_options_exempt
@in_tenant_language
def embed_ask(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    try:
        audiences = _request_ticket(request, tenant)
    except TicketInvalid:
        return framable(views.notice(request, gettext(
            "This chat has been open too long or its sign-in has expired; please reload the page."), 400),
            tenant=tenant)

    def stream_url(pending_id: str) -> str:
        grant = stream_grant_issue(tenant=tenant, audiences=audiences, pending_id=pending_id)
        return (reverse("chat:embed_stream", kwargs={"tenant_slug": tenant.slug})
                + f"?id={pending_id}&grant={grant}")

    return framable(views.ask_turn(request, tenant=tenant, user_id=None, stream_url=stream_url), tenant=tenant)


@require_GET
@xframe_options_exempt
@in_tenant_language
def embed_stream(request: HttpRequest, tenant_slug: str) -> StreamingHttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    pending_id = request.GET.get("id", "")
    try:
        audiences = stream_grant_read(grant=request.GET.get("grant", ""), tenant=tenant, pending_id=pending_id)
        ask = pending_ask_claim(pending_id=pending_id, tenant_id=tenant.id, user_id=None)
    except (TicketInvalid, PendingForeign) as exc:
        raise Http404("No such page.") from exc
    except PendingUnknown:
        return EventStreamResponse(failed_events(message=gettext(
            "This answer was already sent or did not start within %(seconds)s seconds; please ask again.")
            % {"seconds": PENDING_TTL_SECONDS}))
    return EventStreamResponse(in_active_language(chat_events(tenant=tenant, ask=ask, audiences=audiences)))


@csrf_exempt  # the ticket, not a cookie, says who votes
@require_POST
@xframe_options_exempt
@in_tenant_language
def embed_feedback(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    audiences = _ticket_or_404(request, tenant, missing="No such answer.")
    return framable(views.feedback_turn(request, tenant=tenant, audiences=audiences), tenant=tenant)


@csrf_exempt  # the ticket, not a cookie, says who asks; an embedded visitor leaves their email in the form
@require_POST
@xframe_options_exempt
@in_tenant_language
def embed_person(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    audiences = _ticket_or_404(request, tenant, missing="No such answer.")
    return framable(views.person_turn(request, tenant=tenant, audiences=audiences, contact=""), tenant=tenant)


@csrf_exempt  # the follow-up's secret id is the authority, as on the chat page; no cookie is read
@require_POST
@xframe_options_exempt
def embed_followup_contact(request: HttpRequest, tenant_slug: str, public_id: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    _ticket_or_404(request, tenant, missing="No such page.")
    return framable(followup.followup_contact(request, tenant_slug, public_id), tenant=tenant)
