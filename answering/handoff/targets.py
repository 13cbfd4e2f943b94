"""Where a webhook may go: http(s) to a public address (docs/decisions/0045).

A URL's host is resolved and every address it resolves to is checked, when the URL is saved
and again before each delivery, so a name that later points inside the network is refused
then. Only global unicast passes, IPv4 carried inside IPv6 judged by itself (the one guard,
tenants/netguard.py, which website sources use too), unless WEBHOOK_ALLOW_PRIVATE_TARGETS is on
(the tests turn it on for loopback).
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from django.conf import settings

from tenants.netguard import first_refused


class UnsafeTarget(ValueError):
    """A webhook URL this server will not send to."""


def target_check(url: str) -> list[str]:
    """The addresses `url` resolves to, or UnsafeTarget saying why it is refused."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeTarget("a webhook URL must be http:// or https:// with a host")
    if parts.username or parts.password:
        raise UnsafeTarget("a webhook URL may not carry credentials")
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80),
                                   proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeTarget(f"cannot resolve {parts.hostname}: {exc}") from exc
    addresses = sorted({str(info[4][0]) for info in infos})
    refused = None if settings.WEBHOOK_ALLOW_PRIVATE_TARGETS else first_refused(addresses)
    if refused:
        text, why = refused
        raise UnsafeTarget(f"{parts.hostname} resolves to {text}, a private, loopback or link-local "
                           f"address ({why}); webhooks go to public addresses only")
    return addresses
