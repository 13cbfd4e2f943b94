"""The asker's language, for every surface that answers (docs/decisions/0050): the chat page,
the widget, the REST and the OpenAI-compatible APIs.

An API request's Accept-Language picks the first language there is a catalogue for
(settings.LANGUAGES); a request that names none of them reads the tenant's language. A chat
page speaks the tenant's language unless the visitor chose another (answering/chat/language.py). An event
stream produces its events later, on other threads, so it carries the language with it.
Imports Django and the tenant model only, so the surfaces can share it (answering/sse.py is the
same kind of module).
"""

from __future__ import annotations

from collections.abc import Iterator

from django.conf import settings
from django.http import HttpRequest
from django.utils import translation
from django.utils.translation.trans_real import parse_accept_lang_header

from tenants.models import Tenant


def asker_language(*, request: HttpRequest, tenant: Tenant) -> str:
    """An API client's language: the first its Accept-Language names that has a catalogue, else
    the tenant's. (The chat pages do not read Accept-Language: answering/chat/language.py.)"""
    for code, _ in parse_accept_lang_header(request.META.get("HTTP_ACCEPT_LANGUAGE", "")):
        if code == "*":
            break
        supported = supported_language(code)
        if supported:
            return supported
    return tenant_language(tenant)


def supported_language(code: str) -> str:
    """The catalogue `code` reads in (`cs-CZ` → `cs`), or "" when there is none."""
    try:
        return translation.get_supported_language_variant(code) if code else ""
    except LookupError:
        return ""


def tenant_language(tenant: Tenant) -> str:
    return supported_language(tenant.language) or settings.LANGUAGE_CODE


def in_active_language(events: Iterator[bytes]) -> Iterator[bytes]:
    """The events, each produced in the language active now, when the view calls this: the
    stream runs after the view returns, where the middleware's language (the browser's) is
    active again, not the view's."""
    return _in_language(events, translation.get_language())


def _in_language(events: Iterator[bytes], language: str) -> Iterator[bytes]:
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
