"""The chat pages' language (issue 48 item 6, docs/decisions/0050 as amended by 0109): the
tenant's, unless the visitor chose another with the page's language switch.

A help centre in Czech is read in Czech: an English browser's Accept-Language no longer wraps
Czech answers in English labels. The choice (`?lang=en`) is remembered in a cookie scoped to
the tenant's pages (`/t/<slug>/`), so the asker's follow-up page and the answers' streams speak
it too. The embedded widget reads and sets no cookie (answering/chat/embed.py): it speaks the
tenant's language.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils import translation

from answering.chat import access
from answering.language import supported_language, tenant_language
from tenants.models import Tenant

_Response = TypeVar("_Response", bound=HttpResponseBase)

CHOICE_PARAMETER = "lang"
CHOICE_COOKIE = "answerdesk_language"
CHOICE_SECONDS = 365 * 24 * 3600


def chat_language(*, request: HttpRequest, tenant: Tenant, chooses: bool = True) -> tuple[str, str]:
    """(the language to speak, the one chosen by this request or ""). Without `chooses`, the
    tenant's: a widget's later requests could carry no choice, so its first does not make one."""
    if not chooses:
        return tenant_language(tenant), ""
    chosen = supported_language(request.GET.get(CHOICE_PARAMETER, ""))
    if chosen:
        return chosen, chosen
    remembered = supported_language(request.COOKIES.get(CHOICE_COOKIE, ""))
    return remembered or tenant_language(tenant), ""


def in_chat_language(view: Callable[..., _Response]) -> Callable[..., _Response]:
    """Run a chat view (`tenant_slug` in its URL) in the chat's language; remember a choice."""
    return _in_language(view, chooses=True)


def in_tenant_language(view: Callable[..., _Response]) -> Callable[..., _Response]:
    """Run an embedded view in the tenant's language: the widget keeps no cookie."""
    return _in_language(view, chooses=False)


def _in_language(view: Callable[..., _Response], *, chooses: bool) -> Callable[..., _Response]:
    @functools.wraps(view)
    def wrapper(request: HttpRequest, tenant_slug: str, *args: Any, **kwargs: Any) -> _Response:
        language, chosen = chat_language(request=request, tenant=access.tenant_for_slug(tenant_slug),
                                         chooses=chooses)
        with translation.override(language):
            response = view(request, tenant_slug, *args, **kwargs)
        response.headers["Content-Language"] = language
        if chosen:
            response.set_cookie(CHOICE_COOKIE, chosen, max_age=CHOICE_SECONDS, path=f"/t/{tenant_slug}/",
                                samesite="Lax", httponly=True, secure=request.is_secure())
        return response

    return wrapper
