"""Sign-in attempts limited per client address and per username (docs/decisions/0025).

Every POST to a wrapped login view counts one attempt against two fixed-window counters in
`tenants_ratelimit` before the password is checked: the client address, and the username
(whether or not such a user exists, so a refusal says nothing about existence). A successful
sign-in gives its attempt back, so only failures spend the budget. Counting before checking,
rather than counting failures afterwards, is what keeps parallel guesses from slipping past
the limit: the UPSERT hands every attempt its own number.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _

from tenants.ratelimit import RateDecision, client_address, rate_limit

# The time is a parameter: Citus refuses clock_timestamp() in an UPDATE's WHERE (docs/decisions/0121).
_REFUND = """
UPDATE tenants_ratelimit SET hits = hits - 1
WHERE bucket = %(bucket)s AND hits > 0 AND expires_at > %(now)s
"""


def username_bucket(username: str) -> str:
    # Hashed: people type passwords into the username field, and the table must not keep them.
    normalized = unicodedata.normalize("NFKC", username).strip().casefold()
    return "login-user:" + hashlib.sha256(normalized.encode()).hexdigest()[:40]


def address_bucket(address: str) -> str:
    return f"login-addr:{address}"


def login_attempt_count(*, address: str, username: str) -> list[RateDecision]:
    """Count one attempt for the address and for the username; refused decisions mean 429."""
    window = int(settings.LOGIN_FAILURE_WINDOW_SECONDS)
    return [
        rate_limit(bucket=address_bucket(address), limit=int(settings.LOGIN_FAILURES_PER_ADDRESS),
                   window_seconds=window),
        rate_limit(bucket=username_bucket(username), limit=int(settings.LOGIN_FAILURES_PER_USERNAME),
                   window_seconds=window),
    ]


def login_attempt_refund(*, address: str, username: str) -> None:
    """Give a successful sign-in's attempt back to both counters."""
    with connection.cursor() as cursor:
        for bucket in (address_bucket(address), username_bucket(username)):
            cursor.execute(_REFUND, {"bucket": bucket, "now": timezone.now()})


def _refused(request: HttpRequest, retry_after: int) -> HttpResponse:
    from django.contrib import admin

    minutes = max(1, math.ceil(retry_after / 60))
    context = {**admin.site.each_context(request), "title": _("Too many sign-in attempts"), "minutes": minutes}
    response = render(request, "admin/login_limited.html", context, status=429)
    response["Retry-After"] = str(retry_after)
    return response


def login_rate_limited(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a login view (the admin's): POSTs are counted, refused with 429 past a limit."""

    @wraps(view)
    def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method != "POST":
            return view(request, *args, **kwargs)
        address, username = client_address(request), str(request.POST.get("username", ""))[:254]
        refused = [d for d in login_attempt_count(address=address, username=username) if not d.allowed]
        if refused:
            return _refused(request, max(d.retry_after for d in refused))
        response = view(request, *args, **kwargs)
        if response.status_code in (301, 302, 303) and request.user.is_authenticated:
            login_attempt_refund(address=address, username=username)
        return response

    return limited
