"""The chat page speaks the asker's language (docs/decisions/0050).

The browser's Accept-Language picks the first language there is a catalogue for
(settings.LANGUAGES); a browser that names none of them reads the tenant's language. The
event stream renders its fragments later, on other threads, so it carries the language with it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.translation.trans_real import parse_accept_lang_header

from answering.chat import access
from tenants.models import Tenant


def chat_language(*, request: HttpRequest, tenant: Tenant) -> str:
    for code, _ in parse_accept_lang_header(request.META.get("HTTP_ACCEPT_LANGUAGE", "")):
        if code == "*":
            break
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    try:
        return translation.get_supported_language_variant(tenant.language)
    except LookupError:
        return settings.LANGUAGE_CODE


def in_chat_language(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Run a chat view (`tenant_slug` in its URL) in the asker's language."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, tenant_slug: str, *args: Any, **kwargs: Any) -> HttpResponse:
        language = chat_language(request=request, tenant=access.tenant_for_slug(tenant_slug))
        with translation.override(language):
            response = view(request, tenant_slug, *args, **kwargs)
        response.headers["Content-Language"] = language
        return response

    return wrapper


def in_active_language(events: Iterator[bytes]) -> Iterator[bytes]:
    """The events, each produced in the language active now (the stream runs after the view)."""
    language = translation.get_language()
    try:
        while True:
            with translation.override(language):
                event = next(events, None)
            if event is None:
                return
            yield event
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
