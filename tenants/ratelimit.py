"""Fixed-window rate limits counted in PostgreSQL: one UPSERT per request.

Why the database and not process memory: uvicorn and gunicorn run several workers, and a
counter in one worker's memory would let a client multiply its limit by the worker count.
Why a fixed window: one row and one statement per request; the cost is that a client can
spend up to twice the limit across a window boundary, which is acceptable for abuse limits
(docs/decisions/0013).
"""

from __future__ import annotations

import datetime as dt
import math
import random
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connections
from django.utils import timezone

# One request in this many sweeps windows that have ended, so the table stays small without a cron.
_SWEEP_ONE_IN = 200

# The window is computed from the app's clock and passed in, with no CTE and no clock_timestamp():
# on Citus the counter table is distributed by bucket, and an INSERT ... VALUES naming the bucket
# with only IMMUTABLE expressions in ON CONFLICT ... SET routes to one shard (docs/decisions/0121).
_UPSERT = """
INSERT INTO tenants_ratelimit AS r (bucket, window_start, expires_at, hits)
VALUES (%(bucket)s, %(start)s, %(expires)s, 1)
ON CONFLICT (bucket, window_start) DO UPDATE SET hits = r.hits + 1
RETURNING r.hits, r.expires_at
"""
# Every bucket's ended windows: a statement across shards on purpose (the statement check's
# allow-list names it), with the time as a parameter so Citus accepts it.
_SWEEP = "DELETE FROM tenants_ratelimit WHERE expires_at < %(now)s"


def window_of(*, now: dt.datetime, window_seconds: int) -> tuple[dt.datetime, dt.datetime]:
    """The fixed window holding `now`: its start (a multiple of the window since the epoch) and end."""
    start = math.floor(now.timestamp() / window_seconds) * window_seconds
    begins = dt.datetime.fromtimestamp(start, tz=dt.timezone.utc)
    return begins, begins + dt.timedelta(seconds=window_seconds)


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    retry_after: int  # seconds until the current window ends; 0 when allowed
    remaining: int = 0
    limit: int = 0


def rate_limit(*, bucket: str, limit: int, window_seconds: int, using: str = "default") -> RateDecision:
    """Count one request against `bucket` and say whether it is within `limit` per window.

    `bucket` names what is limited ("api-key:ad_1a2b…", "chat-addr:203.0.113.9"); callers
    prefix it with the kind of limit so two limits never share a counter. A limit of 0 or
    less means unlimited and touches no row. The counter runs in autocommit (or in the
    caller's transaction): a rejected request still counts, so hammering does not reset it.
    """
    if limit <= 0:
        return RateDecision(allowed=True, retry_after=0, remaining=0, limit=0)
    if window_seconds <= 0:
        raise ValueError("window_seconds must be positive")
    now = timezone.now()
    start, expires = window_of(now=now, window_seconds=int(window_seconds))
    with connections[using].cursor() as cursor:
        cursor.execute(_UPSERT, {"bucket": bucket[:200], "start": start, "expires": expires})
        hits, expires_at = cursor.fetchone()
        if random.randrange(_SWEEP_ONE_IN) == 0:
            cursor.execute(_SWEEP, {"now": now})
    seconds_left = math.ceil((expires_at - now).total_seconds())
    if hits <= limit:
        return RateDecision(allowed=True, retry_after=0, remaining=limit - hits, limit=limit)
    return RateDecision(allowed=False, retry_after=max(1, int(seconds_left)), remaining=0, limit=limit)


def rate_limit_sweep(*, using: str = "default") -> int:
    """Delete counters of windows that have ended; returns how many went."""
    with connections[using].cursor() as cursor:
        cursor.execute(_SWEEP, {"now": timezone.now()})
        return int(cursor.rowcount)


def client_address(request: Any) -> str:
    """The address to limit: REMOTE_ADDR, or the X-Forwarded-For entry our own proxy appended.

    Only the last RATE_LIMIT_TRUSTED_PROXIES entries were written by proxies we run; anything
    left of them is whatever the client sent, so trusting the left-most entry would let a
    client pick a fresh address per request.
    """
    trusted = int(settings.RATE_LIMIT_TRUSTED_PROXIES)
    remote = str(request.META.get("REMOTE_ADDR") or "unknown")
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if trusted <= 0 or not forwarded:
        return remote
    hops = [hop.strip() for hop in str(forwarded).split(",") if hop.strip()]
    return hops[-min(trusted, len(hops))] if hops else remote
