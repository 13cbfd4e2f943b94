"""A tenant's embedded chat: which origins may frame it, and the customer tokens its server signs.

Ground floor (imports no other app): the admin validates origins with `embed_origins_parse`,
the chat's embed views (answering/chat/embed.py) read them and check tokens with
`customer_token_read`. See docs/decisions/0054-embed-framing-rule.md.

The token a tenant's server puts in the snippet's `data-token`:

    <slug>|<audiences, comma-separated>|<expiry, unix seconds>|<hex HMAC-SHA256 of the first three, '|'-joined>

keyed with the tenant's `embed_secret`. It is short-lived (at most TOKEN_MAX_LIFETIME_SECONDS
ahead) and may name only EMBEDDABLE_AUDIENCES: `internal` is never readable from a widget.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from tenants.models import Tenant

PUBLIC = "public"
EMBEDDABLE_AUDIENCES = frozenset({"public", "customer"})
TOKEN_MAX_LIFETIME_SECONDS = 3600
_HOST = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$"
                   r"|^\[[0-9a-f:.]+\]$")


class OriginInvalid(ValueError):
    """One line of the origins field is not `scheme://host[:port]`; the message names the line."""


class TokenRefused(ValueError):
    """A customer token that is malformed, forged, expired, too long-lived or for another tenant."""


@dataclass(frozen=True)
class CustomerToken:
    audiences: tuple[str, ...]
    expires_at: int


def _origin_of_line(line: str, number: int) -> str:
    def bad(why: str) -> OriginInvalid:
        return OriginInvalid(f"Line {number} ({line!r}): {why}. Write one origin per line, "
                             f"scheme://host[:port], e.g. https://help.example.com")

    if "*" in line:
        raise bad("wildcards are not allowed; list each origin")
    parts = urlsplit(line)
    if parts.scheme not in ("http", "https"):
        raise bad("the scheme must be http or https")
    if parts.path not in ("", "/") or parts.query or parts.fragment or line.endswith(("?", "#")):
        raise bad("an origin has no path, query or fragment")
    if parts.username is not None or parts.password is not None:
        raise bad("an origin has no user name or password")
    host = (parts.hostname or "").lower()
    if not host or not _HOST.match(host if ":" not in host else f"[{host}]"):
        raise bad("the host name is missing or malformed")
    try:
        port = parts.port
    except ValueError as exc:
        raise bad("the port must be a number from 1 to 65535") from exc
    shown_host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown_host}" + (f":{port}" if port is not None else "")


def embed_origins_parse(*, text: str) -> list[str]:
    """The origins of the admin's field, normalised (lower case, no trailing slash), duplicates
    dropped; OriginInvalid naming the first bad line."""
    origins: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        origin = _origin_of_line(line, number)
        if origin not in origins:
            origins.append(origin)
    return origins


def frame_ancestors(*, text: str) -> str:
    """The CSP directive for a tenant's stored origins; nothing stored (or, defensively,
    anything unreadable) frames nowhere."""
    try:
        origins = embed_origins_parse(text=text)
    except OriginInvalid:
        origins = []
    return "frame-ancestors " + (" ".join(origins) if origins else "'none'")


def embed_secret_new() -> str:
    """A fresh per-tenant signing key (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def customer_token_sign(*, secret: str, tenant_slug: str, audiences: list[str], expires_at: int) -> str:
    """What a tenant's server computes (README, "Embedding"); here for tests and the admin's example."""
    message = f"{tenant_slug}|{','.join(audiences)}|{int(expires_at)}"
    signature = hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()
    return f"{message}|{signature}"


def customer_token_read(*, token: str, tenant_slug: str, secret: str, now: float | None = None) -> CustomerToken:
    """The audiences a valid token grants (public always among them); TokenRefused otherwise."""
    if not secret:
        raise TokenRefused("this tenant has no embed secret, so it signs no tokens")
    parts = token.split("|")
    if len(parts) != 4 or len(token) > 512:
        raise TokenRefused("malformed token")
    slug, audience_text, expiry_text, signature = parts
    message = f"{slug}|{audience_text}|{expiry_text}"
    expected = hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature.lower()):
        raise TokenRefused("bad signature")
    if slug != tenant_slug:
        raise TokenRefused("the token was signed for another tenant")
    if not expiry_text.isdigit():
        raise TokenRefused("malformed expiry")
    expires_at, current = int(expiry_text), time.time() if now is None else now
    if expires_at <= current:
        raise TokenRefused("the token has expired")
    if expires_at > current + TOKEN_MAX_LIFETIME_SECONDS:
        raise TokenRefused(f"the token lives longer than {TOKEN_MAX_LIFETIME_SECONDS} seconds")
    audiences = {a for a in audience_text.split(",") if a}
    if not audiences <= EMBEDDABLE_AUDIENCES:
        raise TokenRefused(f"a widget may read only {', '.join(sorted(EMBEDDABLE_AUDIENCES))}")
    return CustomerToken(audiences=tuple(sorted(audiences | {PUBLIC})), expires_at=expires_at)


def embed_secret_rotate(*, tenant_id: int) -> str:
    """Replace the tenant's embed secret; returns the new one (the caller shows it once)."""
    secret = embed_secret_new()
    Tenant.objects.filter(pk=tenant_id).update(embed_secret=secret)
    return secret
