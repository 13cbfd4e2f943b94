"""The chat page: thin views over answering.pipeline. See docs/decisions/0016 and 0017."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap, retarget

from answering.records import feedback_record
from answering.sse import paced
from answering.web import access, render as fragments
from answering.web.questions import AskInvalid, ask_input_parse
from answering.web.stream import chat_events, failed_events
from answering.web.tokens import (STREAM_MAX_AGE_SECONDS, StreamRequest, TokenForeign, TokenInvalid,
                                  feedback_ticket_read, stream_token_issue, stream_token_read)
from tenants.ratelimit import client_address, rate_limit

PAGE = fragments.PAGE
RATE_WINDOW_SECONDS = 60


def _user_id(request: HttpRequest) -> int | None:
    return request.user.pk if request.user.is_authenticated else None


def _notice(request: HttpRequest, message: str, status: int) -> HttpResponse:
    """Problems with the question go to the notice under the form, not into the conversation."""
    response = render(request, f"{PAGE}#notice", {"message": message}, status=status)
    return reswap(retarget(response, "#ask-notice"), "innerHTML")


@require_GET
def chat_page(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    audiences = access.chat_audiences(tenant=tenant, user=request.user)
    return render(request, PAGE, {"tenant": tenant, "audiences": audiences,
                                  "history_turns": settings.ANSWER_HISTORY_TURNS})


@require_POST
def chat_ask(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    decision = rate_limit(bucket=f"chat-addr:{client_address(request)}",
                          limit=settings.CHAT_RATE_LIMIT_PER_ADDRESS, window_seconds=RATE_WINDOW_SECONDS)
    if not decision.allowed:
        response = _notice(request, f"You are asking faster than we can answer. Please wait "
                                    f"{decision.retry_after} seconds and ask again.", 429)
        response["Retry-After"] = str(decision.retry_after)
        return response
    try:
        ask = ask_input_parse(data=request.POST)
    except AskInvalid as exc:
        return _notice(request, str(exc), 400)
    turn_id = uuid.uuid4().hex[:12]
    token = stream_token_issue(request=StreamRequest(
        tenant_id=tenant.id, user_id=_user_id(request),
        audiences=access.chat_audiences(tenant=tenant, user=request.user), question=ask.question,
        history=ask.history, conversation_id=ask.conversation_id, turn_id=turn_id,
    ))
    stream_url = reverse("chat:stream", kwargs={"tenant_slug": tenant.slug}) + f"?token={token}"
    return render(request, f"{PAGE}#turn", {"turn_id": turn_id, "question": ask.question, "stream_url": stream_url})


@require_GET
def chat_stream(request: HttpRequest, tenant_slug: str) -> StreamingHttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    try:
        ask = stream_token_read(token=request.GET.get("token", ""), tenant_id=tenant.id, user_id=_user_id(request))
    except TokenForeign as exc:
        raise Http404("No such page.") from exc
    except TokenInvalid:
        # Expired or damaged: still a stream that ends with `done`, or the EventSource would retry forever.
        return _event_stream(failed_events(message=f"This answer did not start within {STREAM_MAX_AGE_SECONDS} "
                                                   "seconds; please ask again."))
    # One POST, one answer: the POST is rate-limited, and a replayed token would otherwise run
    # the whole pipeline again for every GET within its minute. The claim's window spans two
    # token lifetimes, so a token is answered once (twice only across a window boundary).
    claim = rate_limit(bucket=f"chat-stream:{ask.turn_id}", limit=1, window_seconds=2 * STREAM_MAX_AGE_SECONDS)
    if not claim.allowed:
        return _event_stream(failed_events(message="This answer has already been sent; please ask again."))
    return _event_stream(chat_events(tenant=tenant, ask=ask))


def _event_stream(events: Iterator[bytes]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(paced(events), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a buffering proxy would hold the sources back with the text
    return response


@require_POST
def chat_feedback(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    try:
        trace_id = feedback_ticket_read(ticket=request.POST.get("ticket", ""), tenant_id=tenant.id)
    except TokenInvalid as exc:
        raise Http404("No such answer.") from exc
    vote = request.POST.get("vote", "")
    if vote not in ("1", "-1"):
        return HttpResponse("vote must be 1 or -1", status=400, content_type="text/plain")
    if not feedback_record(tenant=tenant, trace_id=trace_id, vote=int(vote), comment=request.POST.get("comment", "")):
        raise Http404("No such answer.")
    return render(request, f"{PAGE}#thanks", {"vote": int(vote)})
