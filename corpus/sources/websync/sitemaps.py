"""Reading a source's sitemap (and the sitemaps an index names, one level, same host) inside the
run's budget: entries are taken as the bytes arrive and reading stops as soon as the crawl has
one page more than it may fetch, or a bound of the budget is reached; nothing past that point is
downloaded or parsed. What the crawl refuses is handed back through `skip` (counted, and kept
as a row only while the budget has rows), an unreadable nested sitemap through `failed`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from corpus.sources.websync import crawl
from corpus.sources.websync.budget import Budget, BudgetSpent
from corpus.sources.websync.fetch import Fetcher

MAX_SITEMAPS = 50  # sitemaps of an index that are read (the protocol's own is 50,000)

Refusal = Callable[[str], str | None]
Note = Callable[[str, str], None]


@dataclass
class SitemapRead:
    pages: list[str] = field(default_factory=list)  # accepted page URLs, in order, each once
    stopped: str = ""  # why reading stopped before the end of the sitemaps; "" when it did not


@dataclass
class _Reading:
    fetcher: Fetcher
    budget: Budget
    origin: str
    want: int
    refusal: Refusal
    skip: Note
    read: SitemapRead
    nested: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)


def read_sitemaps(*, fetcher: Fetcher, budget: Budget, url: str, origin: str, want: int, refusal: Refusal,
                  skip: Note, failed: Note) -> SitemapRead:
    """The first `want` pages the sitemap at `url` lists that `refusal` lets through. An
    unreadable `url` raises ValueError; an unreadable nested sitemap is `failed` and passed over."""
    reading = _Reading(fetcher=fetcher, budget=budget, origin=origin, want=want, refusal=refusal, skip=skip,
                       read=SitemapRead())
    try:
        _read_file(reading, url, nested_allowed=True)
    except BudgetSpent as exc:
        reading.read.stopped = str(exc)
        return reading.read
    except (httpx.HTTPError, OSError, ValueError, SyntaxError) as exc:
        raise ValueError(f"sitemap {url} unreadable: {exc}") from exc
    for current in reading.nested:
        if len(reading.read.pages) >= want:
            break
        try:
            _read_file(reading, current, nested_allowed=False)
        except BudgetSpent as exc:
            reading.read.stopped = reading.read.stopped or str(exc)
            break
        except (httpx.HTTPError, OSError, ValueError, SyntaxError) as exc:
            failed(current, f"sitemap unreadable: {exc}"[:500])
    return reading.read


def _read_file(reading: _Reading, url: str, *, nested_allowed: bool) -> None:
    """Stream one sitemap file, entry by entry, until the reading has what it wants."""
    reader = crawl.SitemapReader()
    with reading.fetcher.stream(url, same_host=reading.origin) as streamed:
        if streamed.status != 200:
            raise ValueError(f"HTTP {streamed.status}")
        for piece in streamed.pieces:
            reading.budget.spend_sitemap_bytes(len(piece))
            for entry in reader.feed(piece):
                if not _take(reading, entry, index=reader.index, nested_allowed=nested_allowed) or reader.full:
                    return
        for entry in reader.close():
            if not _take(reading, entry, index=reader.index, nested_allowed=nested_allowed):
                return


def _take(reading: _Reading, entry: str, *, index: bool, nested_allowed: bool) -> bool:
    """File one entry; False once nothing more of this file is wanted."""
    url = crawl.normalize(entry)
    if index:
        return _take_sitemap(reading, url, nested_allowed=nested_allowed)
    reading.budget.read_url()
    if url in reading.seen:
        return True
    reason = reading.refusal(url)
    if reason:
        reading.skip(url, reason)
        return True
    reading.seen.add(url)
    reading.read.pages.append(url)
    return len(reading.read.pages) < reading.want


def _take_sitemap(reading: _Reading, url: str, *, nested_allowed: bool) -> bool:
    # The sitemaps followed are bounded by MAX_SITEMAPS, not by the entry budget, so that a
    # small page limit still reads a whole index; entries that are not followed are charged.
    if nested_allowed and crawl.same_host(url, reading.origin):
        if len(reading.nested) >= MAX_SITEMAPS:
            reading.read.stopped = f"the sitemap index names more than {MAX_SITEMAPS} sitemaps; the rest is unread"
            return False
        reading.nested.append(url)
        return True
    reading.budget.read_url()
    reading.skip(url, f"sitemap not on {reading.origin}" if nested_allowed
                 else "a sitemap index inside a sitemap index is not read")
    return True
