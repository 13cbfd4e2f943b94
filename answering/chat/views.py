"""The chat page: thin views over answering.pipeline.flow. See docs/decisions/0016, 0017 and 0034."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap, retarget

from answering.pipeline.records import feedback_record, person_requested
from answering.sse import EventStreamResponse
from answering.chat import access, render as fragments
from answering.chat.language import in_chat_language
from answering.chat.policy import strict_page
from answering.language import in_active_language
from answering.chat.questions import AskInvalid, ask_input_parse
from answering.chat.stream import chat_events, failed_events
from answering.chat.pending import (PENDING_TTL_SECONDS, PendingAsk, PendingForeign, PendingUnknown,
                                   pending_ask_claim, pending_ask_store)
from answering.chat.tokens import TokenInvalid, feedback_ticket_read
from tenants.models import Tenant
from tenants.ratelimit import client_address, rate_limit

PAGE = fragments.PAGE
RATE_WINDOW_SECONDS = 60
# A turn's DOM id as ask_turn makes it; the feedback form sends it back so the reply to a
# thumbs-down can replace that turn's "talk to a person" form (nothing else is addressed by it).
TURN_ID = re.compile(r"^[0-9a-f]{12}$")


def _user_id(request: HttpRequest) -> int | None:
    return request.user.pk if request.user.is_authenticated else None


def notice(request: HttpRequest, message: str, status: int) -> HttpResponse:
    """Problems with the question go to the notice under the form, not into the conversation."""
    response = render(request, f"{PAGE}#notice", {"message": message}, status=status)
    return reswap(retarget(response, "#ask-notice"), "innerHTML")


@require_GET
@strict_page
@in_chat_language
def chat_page(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    audiences = access.chat_audiences(tenant=tenant, user=request.user)
    return render(request, PAGE, {"tenant": tenant, "audiences": audiences,
                                  "history_turns": settings.ANSWER_HISTORY_TURNS})


@require_POST
@in_chat_language
def chat_ask(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    return ask_turn(request, tenant=tenant, user_id=_user_id(request),
                    stream_url=lambda pending_id: reverse("chat:stream", kwargs={"tenant_slug": tenant.slug})
                    + f"?id={pending_id}")


def ask_turn(request: HttpRequest, *, tenant: Tenant, user_id: int | None,
             stream_url: Callable[[str], str]) -> HttpResponse:
    """A question from the page (or the embedded page, answering/chat/embed.py): rate limit,
    parse, keep it for the stream, render the turn that opens the stream."""
    decision = rate_limit(bucket=f"chat-addr:{client_address(request)}",
                          limit=settings.CHAT_RATE_LIMIT_PER_ADDRESS, window_seconds=RATE_WINDOW_SECONDS)
    if not decision.allowed:
        response = notice(request, gettext("You are asking faster than we can answer. Please wait %(seconds)s "
                                           "seconds and ask again.") % {"seconds": decision.retry_after}, 429)
        response["Retry-After"] = str(decision.retry_after)
        return response
    try:
        ask = ask_input_parse(data=request.POST)
    except AskInvalid as exc:
        return notice(request, str(exc), 400)
    turn_id = uuid.uuid4().hex[:12]
    pending_id = pending_ask_store(ask=PendingAsk(
        tenant_id=tenant.id, user_id=user_id, question=ask.question, history=ask.history,
        conversation_id=ask.conversation_id, turn_id=turn_id,
    ))
    return render(request, f"{PAGE}#turn", {"turn_id": turn_id, "question": ask.question,
                                            "stream_url": stream_url(pending_id)})


def stream_audiences(request: HttpRequest, tenant: Tenant) -> list[str]:
    """Who reads what is decided here, from the session, when the stream starts; nothing the
    browser sent or the POST stored names an audience (docs/decisions/0034)."""
    return access.chat_audiences(tenant=tenant, user=request.user)


@require_GET
@in_chat_language
def chat_stream(request: HttpRequest, tenant_slug: str) -> StreamingHttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    try:
        # Claimed (deleted) here: one POST, one answer, and a replayed URL finds nothing.
        ask = pending_ask_claim(pending_id=request.GET.get("id", ""), tenant_id=tenant.id,
                                user_id=_user_id(request))
    except PendingForeign as exc:
        raise Http404("No such page.") from exc
    except PendingUnknown:
        # Expired, answered or made up: still a stream that ends with `done`, or the EventSource would retry forever.
        return EventStreamResponse(failed_events(message=gettext(
            "This answer was already sent or did not start within %(seconds)s seconds; please ask again.")
            % {"seconds": PENDING_TTL_SECONDS}))
    return EventStreamResponse(in_active_language(chat_events(
        tenant=tenant, ask=ask, audiences=stream_audiences(request, tenant),
        contact=access.member_email(tenant=tenant, user=request.user))))


@require_POST
@in_chat_language
def chat_feedback(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    return feedback_turn(request, tenant=tenant, audiences=access.chat_audiences(tenant=tenant, user=request.user))


@require_POST
@in_chat_language
def chat_person(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    return person_turn(request, tenant=tenant, audiences=access.chat_audiences(tenant=tenant, user=request.user),
                       contact=access.member_email(tenant=tenant, user=request.user))


def _ticket_trace(request: HttpRequest, tenant: Tenant) -> int:
    """The trace of an answer this visitor was shown on this tenant's page (the signed ticket
    says which); 404 for a forged ticket or another tenant's."""
    try:
        return feedback_ticket_read(ticket=request.POST.get("ticket", ""), tenant_id=tenant.id)
    except TokenInvalid as exc:
        raise Http404("No such answer.") from exc


def _turn_id(request: HttpRequest) -> str:
    turn_id = request.POST.get("turn", "")
    return turn_id if TURN_ID.match(turn_id) else ""


def person_turn(request: HttpRequest, *, tenant: Tenant, audiences: list[str], contact: str) -> HttpResponse:
    """"Talk to a person" under an answer: the answer's trace escalates, and the asker gets the
    abstention's notice (follow-up page, optional email). The trace must be this tenant's and
    readable with the visitor's audiences, or it is a 404 like any unknown answer."""
    escalation = person_requested(tenant=tenant, audiences=audiences, trace_id=_ticket_trace(request, tenant),
                                  contact_email=contact)
    if escalation is None:
        raise Http404("No such answer.")
    return render(request, f"{PAGE}#handoff", {
        "tenant_slug": tenant.slug, "turn_id": _turn_id(request), "follow_up_id": escalation.public_id,
        "contact": escalation.contact_email, "asked": True})


def feedback_turn(request: HttpRequest, *, tenant: Tenant, audiences: list[str]) -> HttpResponse:
    """A vote on an answer this visitor was shown (the ticket says which); `audiences` are the
    visitor's, so a vote never reaches a trace they could not read."""
    ticket = request.POST.get("ticket", "")
    trace_id = _ticket_trace(request, tenant)
    vote = request.POST.get("vote", "")
    if vote not in ("1", "-1"):
        return HttpResponse("vote must be 1 or -1", status=400, content_type="text/plain")
    if not feedback_record(tenant=tenant, audiences=audiences,
                           trace_id=trace_id, vote=int(vote), comment=request.POST.get("comment", "")):
        raise Http404("No such answer.")
    # After a thumbs-down the turn's "talk to a person" comes forward (the same ticket): where
    # a visitor says the answer failed them is where they look for a person.
    return render(request, f"{PAGE}#thanks", {"vote": int(vote), "ticket": ticket, "turn_id": _turn_id(request),
                                              "tenant_slug": tenant.slug})
