"""The chat page speaks the asker's language (docs/decisions/0050): the rule itself is
answering/language.py, shared with the APIs; this is the chat views' decorator."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils import translation

from answering.chat import access
from answering.language import asker_language

_Response = TypeVar("_Response", bound=HttpResponseBase)


def in_chat_language(view: Callable[..., _Response]) -> Callable[..., _Response]:
    """Run a chat view (`tenant_slug` in its URL) in the asker's language."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, tenant_slug: str, *args: Any, **kwargs: Any) -> _Response:
        language = asker_language(request=request, tenant=access.tenant_for_slug(tenant_slug))
        with translation.override(language):
            response = view(request, tenant_slug, *args, **kwargs)
        response.headers["Content-Language"] = language
        return response

    return wrapper
