"""What a sync may fetch and what a page points to: robots.txt, sitemaps, links, canonical URLs,
path patterns. Pure functions over fetched bytes; the fetching is corpus.sources.websync.fetch's."""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator, Sequence
from fnmatch import fnmatchcase
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit
from urllib.robotparser import RobotFileParser

from selectolax.lexbor import LexborHTMLParser

from corpus.parsers.html import prescan
from corpus.sources.websync.fetch import ROBOTS_AGENT, origin_of

HTML_TYPES = ("text/html", "application/xhtml+xml")
MAX_SITEMAP_URLS = 50_000  # the sitemap protocol's own limit per file


def normalize(url: str) -> str:
    """One spelling per page: no fragment, lower-case scheme and host, "/" for an empty path."""
    parts = urlsplit(url.strip())
    netloc = parts.netloc.lower()
    for default in (":80",) if parts.scheme.lower() == "http" else (":443",):
        if netloc.endswith(default):
            netloc = netloc[: -len(default)]
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))


def robots_from(status: int | None, body: bytes) -> RobotFileParser:
    """robots.txt as urllib reads it: missing (4xx) allows all; unreadable (5xx, no answer) or
    forbidden (401/403) disallows all, the conservative reading of RFC 9309."""
    robots = RobotFileParser()
    if status is not None and status in (401, 403):
        robots.disallow_all = True  # type: ignore[attr-defined]  # urllib's own flag (RobotFileParser.read sets it), absent from typeshed
    elif status is not None and 400 <= status < 500:
        robots.allow_all = True  # type: ignore[attr-defined]  # urllib's own flag (RobotFileParser.read sets it), absent from typeshed
    elif status is None or status >= 300:
        robots.disallow_all = True  # type: ignore[attr-defined]  # urllib's own flag (RobotFileParser.read sets it), absent from typeshed
    else:
        robots.parse(body.decode("utf-8", "replace").splitlines())
    return robots


def robots_allow(robots: RobotFileParser, url: str) -> bool:
    return robots.can_fetch(ROBOTS_AGENT, url)


def robots_delay(robots: RobotFileParser) -> float | None:
    delay = robots.crawl_delay(ROBOTS_AGENT)
    return float(delay) if delay is not None else None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class SitemapReader:
    """The <loc> entries of a sitemap or a sitemap index, read as its bytes arrive, so the reader
    can stop at any entry without the rest being downloaded or parsed. Finished elements are
    dropped as they are read: memory stays flat however long the file. expat (>= 2.4) refuses
    entity expansion bombs and ElementTree never fetches external entities."""

    def __init__(self) -> None:
        self._parser: ElementTree.XMLPullParser[ElementTree.Element] = ElementTree.XMLPullParser(
            events=("start", "end"))
        self._root: ElementTree.Element | None = None
        self.entries = 0

    @property
    def full(self) -> bool:
        """The protocol's own limit per file is read: the rest of the file is not."""
        return self.entries >= MAX_SITEMAP_URLS

    @property
    def index(self) -> bool:
        """Whether the file is a sitemap index (its entries are sitemaps, not pages)."""
        return self._root is not None and _local(self._root.tag) == "sitemapindex"

    def feed(self, piece: bytes) -> Iterator[str]:
        """The entries completed by `piece`; raises SyntaxError (ParseError) on malformed XML."""
        self._parser.feed(piece)
        yield from self._read()

    def close(self) -> Iterator[str]:
        self._parser.close()
        yield from self._read()

    def _read(self) -> Iterator[str]:
        for item in self._parser.read_events():
            # Only start and end were asked for: every event is (name, element).
            if len(item) != 2 or not isinstance(item[1], ElementTree.Element):
                continue
            event, element = item[0], item[1]
            if self._root is None:
                self._root = element
            if event != "end":
                continue
            text = (element.text or "").strip() if _local(element.tag) == "loc" else ""
            element.clear()
            if text and self.entries < MAX_SITEMAP_URLS:
                self.entries += 1
                yield text
        if self._root is not None:
            self._root.clear()


def page_links(body: bytes, base: str) -> tuple[list[str], str | None]:
    """(the page's links, its canonical URL), both absolute; raises ParseError on a page the
    HTML parser would refuse."""
    prescan(body)
    tree = LexborHTMLParser(body)
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        base = urljoin(base, base_node.attributes.get("href") or "")
    canonical = None
    for node in tree.css("link[rel][href]"):
        if "canonical" in (node.attributes.get("rel") or "").lower().split():
            canonical = urljoin(base, node.attributes.get("href") or "")
            break
    links = []
    for node in tree.css("a[href]"):
        href = (node.attributes.get("href") or "").strip()
        if href and not href.startswith(("mailto:", "javascript:", "tel:", "#")):
            links.append(urljoin(base, href))
    return links, canonical


def same_host(url: str, origin: str) -> bool:
    return urlsplit(url).scheme in ("http", "https") and origin_of(url) == origin


def patterns(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def pattern_reason(url: str, *, include: Sequence[str], exclude: Sequence[str]) -> str | None:
    """Why a URL's path is left out by the source's patterns, or None when it is in."""
    path = unquote(urlsplit(url).path) or "/"
    for pattern in exclude:
        if fnmatchcase(path, pattern):
            return f"excluded by pattern {pattern}"
    if include and not any(fnmatchcase(path, pattern) for pattern in include):
        return "matches no include pattern"
    return None


_UNSAFE = re.compile(r"[^A-Za-z0-9._/-]+")


def slug_path(url: str) -> str:
    """The file path (without suffix) a page is written to for ingest, which is its document's
    slug: web/<host>/<path>; a query, or characters a slug cannot hold, add a short digest."""
    parts = urlsplit(url)
    host = _UNSAFE.sub("-", parts.netloc.lower()).strip("-") or "host"
    path = unquote(parts.path or "/")
    if path.endswith("/"):
        path += "index"
    for suffix in (".html", ".htm", ".xhtml"):
        if path.lower().endswith(suffix):
            path = path[: -len(suffix)]
    clean = "/".join(p for p in _UNSAFE.sub("-", path).split("/") if p not in ("", ".", ".."))
    clean = clean.lstrip(".") or "index"
    if clean != path.strip("/") or parts.query or len(clean) > 300:
        digest = hashlib.sha256(url.encode()).hexdigest()[:10]
        clean = f"{clean[:300]}-{digest}"
    return f"web/{host}/{clean}"
