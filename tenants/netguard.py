"""Which addresses the server may connect to on someone else's say-so: global unicast only.

Used wherever a tenant names a host the server then reaches (webhook targets in
answering.handoff.targets, website sources in corpus.sources.websync.fetch), so there is one rule to
get right. It lives on the ground floor because both apps import it; it imports the standard
library only.

An IPv6 address that carries an IPv4 one is judged by the IPv4 address inside, because that
is where the packet ends up (the kernel for IPv4-mapped and -compatible, a relay or translator
for 6to4, NAT64 and Teredo): [2002:7f00:1::] is 127.0.0.1. The ranges are spelled out here
rather than read from `ipaddress`'s `is_global`, whose answer differs between Python versions
(3.11 calls 6to4 and the site-local fec0::/10 global).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# IANA's IPv4 special-purpose registry, less nothing: none of these is a public host.
_V4_REFUSED: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.IPv4Network(net), why) for net, why in (
        ("0.0.0.0/8", "'this network'"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared address space (carrier-grade NAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved or broadcast"),
    ))

# Global unicast IPv6 is 2000::/3; inside it, these are not hosts on the internet.
_V6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_V6_REFUSED_IN_GLOBAL: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(net), why) for net, why in (
        ("2001::/23", "IETF protocol assignments"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
    ))
# Outside 2000::/3 everything is refused; these names only make the message readable.
_V6_NAMED: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(net), why) for net, why in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "local-use NAT64, whose prefix length (so where the IPv4 address sits) "
                           "only the local translator knows"),
        ("100::/64", "discard-only"),
        ("fc00::/7", "unique local"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    ))

_V4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries, each with the name of its embedding; none: []."""
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.ipv4_mapped is not None:
        return [("IPv4-mapped", address.ipv4_mapped)]
    if address in _V4_COMPATIBLE and int(address) > 1:  # :: and ::1 are themselves, not 0.0.0.x
        return [("IPv4-compatible", low32)]
    if address.sixtofour is not None:
        return [("6to4", address.sixtofour)]
    if address in _NAT64_WELL_KNOWN:
        return [("NAT64", low32)]
    if address.teredo is not None:
        server, client = address.teredo
        return [("Teredo server", server), ("Teredo client", client)]
    return []


def _v4_refusal(address: ipaddress.IPv4Address) -> str | None:
    return next((f"{why} ({net})" for net, why in _V4_REFUSED if address in net), None)


def _v6_refusal(address: ipaddress.IPv6Address) -> str | None:
    if address in _V6_GLOBAL_UNICAST:
        return next((f"{why} ({net})" for net, why in _V6_REFUSED_IN_GLOBAL if address in net), None)
    named = next((f"{why} ({net})" for net, why in _V6_NAMED if address in net), None)
    return named or "not global unicast (outside 2000::/3)"


def address_refusal(text: str) -> str | None:
    """Why `text` (an address as getaddrinfo prints it, maybe with a %scope) is not a public
    host, or None when it is global unicast after unwrapping every IPv4 it carries."""
    try:
        address: IPAddress = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    if isinstance(address, ipaddress.IPv4Address):
        return _v4_refusal(address)
    for embedding, inner in embedded_ipv4(address):
        why = _v4_refusal(inner)
        if why:
            return f"{embedding} {inner}, {why}"
    if embedded_ipv4(address):
        return None  # delivered to the IPv4 addresses inside, all public
    return _v6_refusal(address)


def first_refused(addresses: Iterable[str]) -> tuple[str, str] | None:
    """The first address that is not a public host, with why; None when every one is."""
    for text in addresses:
        why = address_refusal(text)
        if why:
            return text, why
    return None
