"""The Content-Security-Policy of the chat surface's pages: the chat page, the follow-up page
and the embedded chat, one header built here.

Strict: scripts, styles, images, requests and form posts from this origin only, no inline
script or style (the templates carry none; htmx's own indicator style is switched off by each
page's htmx-config and lives in chat.css), no eval (htmx's `hx-on` and `js:` values stay
unused), no plugins, no <base>. A page that may be framed (the embed) adds its tenant's
`frame-ancestors` to the same header; the others keep X-Frame-Options: DENY.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpResponse

HEADER = "Content-Security-Policy"
# img-src data: for the pages' empty favicon (`<link rel="icon" href="data:,">`).
STRICT = ("default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
          "connect-src 'self'", "base-uri 'none'", "form-action 'self'", "object-src 'none'")


def page_policy(*, frame_ancestors: str | None = None) -> str:
    """The header's value; `frame_ancestors` is a whole directive (tenants.embed.frame_ancestors)."""
    return "; ".join((*STRICT, frame_ancestors) if frame_ancestors else STRICT)


def with_page_policy(response: HttpResponse, *, frame_ancestors: str | None = None) -> HttpResponse:
    response[HEADER] = page_policy(frame_ancestors=frame_ancestors)
    return response


def strict_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The view's responses carry the strict policy, without frame-ancestors."""
    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> HttpResponse:
        return with_page_policy(view(*args, **kwargs))
    return wrapped
