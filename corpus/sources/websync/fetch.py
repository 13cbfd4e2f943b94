"""Fetching untrusted pages: public addresses only, every hop checked, everything bounded.

A URL's host is resolved and every address it resolves to is checked before connecting, and
again for each redirect (followed here, never by httpx, at most MAX_REDIRECTS). The request
then goes to the address that was checked, with the name in the Host header and in TLS (SNI),
so a second lookup by the HTTP client cannot be answered differently (DNS rebinding).
Only global unicast passes, IPv4 carried inside IPv6 judged by itself (the one guard,
tenants/netguard.py, which webhooks use too), unless WEBSYNC_ALLOW_PRIVATE_ADDRESSES is on
(docs/decisions/0055).

Bounds: a connect/read timeout per request, a wall-clock deadline per request and per run,
a byte limit per response read as a stream (a larger body is cut off and refused), and the
run's byte budget (corpus.sources.websync.budget) charged piece by piece.
Requests to one host are spaced by WEBSYNC_DELAY_SECONDS.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import httpx

from corpus.config import SyncLimits
from corpus.sources.websync.budget import Budget, BudgetSpent
from tenants.netguard import first_refused

MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)

Resolver = Callable[[str, int], list[str]]


class Refused(ValueError):
    """A URL this server will not fetch: why is in the message."""


class RunOutOfTime(BudgetSpent):
    """The run's time budget is spent: the crawl stops here."""


class UnsafeAddress(Refused):
    """A host that resolves to a private, loopback or link-local address (or does not resolve)."""


ROBOTS_AGENT = "Answerdesk-sync"


def system_resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return sorted({str(info[4][0]) for info in infos})


def check_url(url: str, *, resolve: Resolver = system_resolve, allow_private: bool | None = None) -> list[str]:
    """The addresses `url` may be fetched from, or Refused naming the reason. `allow_private`
    unset is the deployment's WEBSYNC_ALLOW_PRIVATE_ADDRESSES."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused(f"{url[:200]}: only http:// and https:// URLs with a host are fetched")
    if parts.username or parts.password:
        raise Refused(f"{url[:200]}: a URL may not carry credentials")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = resolve(parts.hostname, port)
    except (OSError, UnicodeError, ValueError) as exc:
        raise UnsafeAddress(f"cannot resolve {parts.hostname}: {exc}") from exc
    if not addresses:
        raise UnsafeAddress(f"cannot resolve {parts.hostname}: no address")
    if allow_private is None:
        allow_private = SyncLimits.from_settings().allow_private_addresses
    refused = None if allow_private else first_refused(addresses)
    if refused:
        text, why = refused
        raise UnsafeAddress(f"{parts.hostname} resolves to {text}, a private, loopback or link-local address "
                            f"({why}); website sync fetches public addresses only")
    return addresses


@dataclass
class Response:
    url: str  # after redirects
    status: int
    headers: Mapping[str, str]
    body: bytes
    redirects: list[str] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


@dataclass
class Streamed:
    """A response whose body is read as it arrives: `pieces` is bounded like `Response.body`."""

    url: str  # after redirects
    status: int
    headers: Mapping[str, str]
    pieces: Iterator[bytes]
    redirects: list[str] = field(default_factory=list)


class Fetcher:
    """One run's HTTP client: checked, pinned, throttled, bounded; every byte read is charged to
    the run's budget when there is one."""

    def __init__(self, *, deadline: float, resolve: Resolver = system_resolve,
                 sleep: Callable[[float], None] = time.sleep, budget: Budget | None = None,
                 limits: SyncLimits | None = None) -> None:
        self.limits = limits or SyncLimits.from_settings()
        self.deadline = deadline
        self.resolve = resolve
        self.sleep = sleep
        self.budget = budget
        self.requests = 0
        self.delay = self.limits.delay_seconds  # raised by a robots.txt Crawl-delay
        self._last_request: dict[str, float] = {}
        timeout = self.limits.timeout_seconds
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
                                    follow_redirects=False, trust_env=False)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, url: str, *, headers: Mapping[str, str] | None = None,
            same_host: str | None = None) -> Response:
        """GET `url`, the whole (bounded) body read; see `stream`."""
        with self.stream(url, headers=headers, same_host=same_host) as streamed:
            body = b"".join(streamed.pieces)
        return Response(url=streamed.url, status=streamed.status, headers=streamed.headers, body=body,
                        redirects=streamed.redirects)

    @contextmanager
    def stream(self, url: str, *, headers: Mapping[str, str] | None = None,
               same_host: str | None = None) -> Iterator[Streamed]:
        """GET `url`, following redirects by hand; each hop is checked before it is connected.
        `same_host`: a redirect to another host (scheme://host:port) is Refused. Leaving the
        block closes the connection: a reader that stops reading stops the download."""
        hops: list[str] = []
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            with self._open(current, headers or {}) as streamed:
                location = streamed.headers.get("location")
                if streamed.status not in REDIRECTS or not location:
                    streamed.redirects = hops
                    yield streamed
                    return
            hops.append(current)
            current = urljoin(current, location).split("#", 1)[0]
            if same_host is not None and origin_of(current) != same_host:
                # Checked for safety first (the refusal names the address), then for the host.
                check_url(current, resolve=self.resolve, allow_private=self.limits.allow_private_addresses)
                raise Refused(f"redirect to {current[:200]} leaves {same_host}")
        raise Refused(f"more than {MAX_REDIRECTS} redirects from {url[:200]}")

    def _throttle(self, host: str) -> None:
        last = self._last_request.get(host)
        if last is not None:
            wait = self.delay - (time.monotonic() - last)
            if wait > 0:
                if time.monotonic() + wait > self.deadline:
                    raise RunOutOfTime("the run's time budget is spent")
                self.sleep(wait)
        self._last_request[host] = time.monotonic()

    @contextmanager
    def _open(self, url: str, headers: Mapping[str, str]) -> Iterator[Streamed]:
        if time.monotonic() >= self.deadline:
            raise RunOutOfTime("the run's time budget is spent")
        addresses = check_url(url, resolve=self.resolve, allow_private=self.limits.allow_private_addresses)
        parsed = httpx.URL(url)
        self._throttle(origin_of(url))
        pinned = str(parsed.copy_with(host=addresses[0].split("%")[0]))
        extensions = {"sni_hostname": parsed.host} if parsed.scheme == "https" else {}
        request_headers = {"User-Agent": self.limits.user_agent, "Accept-Encoding": "identity",
                           "Host": parsed.netloc.decode("ascii"), **headers}
        self.requests += 1
        with self._client.stream("GET", pinned, headers=request_headers, extensions=extensions) as response:
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                # Asked for identity; a compressed body is not inflated here (no decompression bomb).
                raise Refused(f"{url[:200]} came {encoding}-encoded although identity was asked for")
            self._check_declared(url, response.headers.get("content-length", ""))
            yield Streamed(url=url, status=response.status_code, headers=dict(response.headers.items()),
                           pieces=self._pieces(url, response))

    def _check_declared(self, url: str, declared: str) -> None:
        limit = self.limits.max_page_bytes
        if declared.isdigit() and int(declared) > limit:
            raise Refused(f"{url[:200]} declares {int(declared):,} bytes, over the {limit:,}-byte limit")
        if declared.isdigit() and self.budget is not None and int(declared) > self.budget.bytes_left():
            raise BudgetSpent(f"{url[:200]} declares {int(declared):,} bytes, more than the run's byte budget "
                              f"has left ({self.budget.bytes_left():,})")

    def _pieces(self, url: str, response: httpx.Response) -> Iterator[bytes]:
        limit = self.limits.max_page_bytes
        # A slow server may keep each read under the timeout: the page's own deadline cuts it off.
        page_deadline = min(self.deadline, time.monotonic() + 4 * self.limits.timeout_seconds)
        size = 0
        for piece in response.iter_raw():
            size += len(piece)
            if size > limit:
                raise Refused(f"{url[:200]} is over the {limit:,}-byte limit")
            if self.budget is not None:
                self.budget.spend_bytes(len(piece))
            if time.monotonic() > page_deadline:
                raise TimeoutError(f"{url[:200]} took longer than its time budget")
            yield piece


def origin_of(url: str) -> str:
    """scheme://host[:port], lower-cased: what "the same host" compares."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port and parts.port != {"http": 80, "https": 443}.get(parts.scheme) else ""
    return f"{parts.scheme.lower()}://{host}{port}"
