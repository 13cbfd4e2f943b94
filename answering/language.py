"""The asker's language, for every surface that answers (docs/decisions/0050): the chat page,
the widget, the REST and the OpenAI-compatible APIs.

The request's Accept-Language picks the first language there is a catalogue for
(settings.LANGUAGES); a request that names none of them reads the tenant's language. An event
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
