"""The asker's follow-up page, /t/<tenant>/f/<public id>/ (docs/decisions/0044): the question,
its status and the replies; the asker adds a message (rate-limited) or leaves an email. A
small JSON status feeds the chat page's badge. Thin: the reads and writes are
answering/handoff/followups.py's."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from answering.chat import access
from answering.chat.language import in_chat_language
from answering.chat.policy import strict_page
from answering.handoff import followups
from tenants.ratelimit import client_address, rate_limit

PAGE = "chat/followup.html"
HOUR = 3600


def _read(tenant_id: int, public_id: str) -> followups.FollowUp:
    try:
        return followups.followup_read(tenant_id=tenant_id, public_id=public_id)
    except followups.FollowUpUnknown as exc:
        raise Http404("No such page.") from exc


def _page(request: HttpRequest, tenant_slug: str, public_id: str, *, notice: str = "", status: int = 200,
          fragment: str = "") -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    followup = _read(tenant.id, public_id)
    return render(request, PAGE + (f"#{fragment}" if fragment else ""),
                  {"tenant": tenant, "followup": followup, "notice": notice}, status=status)


@require_GET
@strict_page
@in_chat_language
def followup_page(request: HttpRequest, tenant_slug: str, public_id: str) -> HttpResponse:
    response = _page(request, tenant_slug, public_id)
    response["Referrer-Policy"] = "no-referrer"  # the URL is the asker's key: never send it onwards
    response["X-Robots-Tag"] = "noindex"
    return response


@require_GET
def followup_status(request: HttpRequest, tenant_slug: str, public_id: str) -> JsonResponse:
    """What the chat page's badge needs, and nothing personal: the status and the reply count."""
    tenant = access.tenant_for_slug(tenant_slug)
    followup = _read(tenant.id, public_id)
    return JsonResponse({"status": followup.status, "replies": followup.agent_replies})


def _limited(request: HttpRequest, public_id: str) -> int:
    """Seconds to wait, or 0: per follow-up and per client address, FOLLOWUP_MESSAGES_PER_HOUR each."""
    for bucket in (f"followup-id:{public_id}", f"followup-addr:{client_address(request)}"):
        decision = rate_limit(bucket=bucket, limit=settings.FOLLOWUP_MESSAGES_PER_HOUR, window_seconds=HOUR)
        if not decision.allowed:
            return decision.retry_after
    return 0


@require_POST
@in_chat_language
def followup_message(request: HttpRequest, tenant_slug: str, public_id: str) -> HttpResponse:
    tenant = access.tenant_for_slug(tenant_slug)
    _read(tenant.id, public_id)  # an unknown id is a 404 before it costs anyone's rate limit
    wait = _limited(request, public_id)
    if wait:
        response = _page(request, tenant_slug, public_id, status=429, fragment="thread",
                         notice=gettext("You have sent several messages already; please wait %(minutes)s min.")
                         % {"minutes": wait // 60 + 1})
        response["Retry-After"] = str(wait)
        return response
    try:
        followups.asker_message_add(tenant_id=tenant.id, public_id=public_id, body=request.POST.get("body", ""))
    except ValueError as exc:
        return _page(request, tenant_slug, public_id, notice=str(exc), status=400, fragment="thread")
    return _page(request, tenant_slug, public_id, notice=gettext("Sent. We will reply here."), fragment="thread")


@require_POST
@in_chat_language
def followup_contact(request: HttpRequest, tenant_slug: str, public_id: str) -> HttpResponse:
    """The email left on an abstention (chat page) or on the follow-up page."""
    tenant = access.tenant_for_slug(tenant_slug)
    _read(tenant.id, public_id)
    if _limited(request, public_id):
        return HttpResponse(gettext("Too many requests; please wait."), status=429, content_type="text/plain")
    try:
        followups.followup_contact_set(tenant_id=tenant.id, public_id=public_id, email=request.POST.get("email", ""))
    except followups.ContactInvalid as exc:
        return render(request, f"{PAGE}#contact_result", {"message": str(exc), "ok": False}, status=400)
    return render(request, f"{PAGE}#contact_result", {"message": gettext("Thanks, we will also reply by email."), "ok": True})
