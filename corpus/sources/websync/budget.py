"""One sync run's budget: what a run may read, store and spend, whatever the site says.

A site controls its sitemaps, its robots.txt and its pages, so every quantity a run handles is
bounded here, once per run, and checked while the bytes arrive (a sitemap stops being read
the moment its bound is reached; nothing is parsed and then cut):

- pages: URLs requested as pages, at most the source's page limit (itself at most
  WEBSYNC_MAX_PAGES), and WebPage rows written for the URLs this run met, at most the same
  number: a URL refused before fetching gets a row only while rows remain, the rest are counted;
- sitemap entries: SITEMAP_URLS_PER_PAGE per page of the limit, over all the sitemaps read
  (an index's own entries are bounded by the sitemaps it may name, corpus.sources.websync.sitemaps);
- sitemap bytes: SITEMAP_BYTES_PER_URL per entry of that bound (whitespace or comments carry no
  URL, so the entry count alone would not bound them);
- bytes: every byte the run reads (robots.txt, sitemaps, pages), WEBSYNC_MAX_RUN_BYTES;
- time: WEBSYNC_MAX_RUN_SECONDS.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any


from corpus.config import SyncLimits

# A sitemap lists pages the source's patterns or robots.txt may leave out; fifty entries a page
# finds the pages of a site that lists one in fifty of its URLs under the include pattern.
SITEMAP_URLS_PER_PAGE = 50
# Generous for entries with lastmod, images or a few dozen hreflang alternates.
SITEMAP_BYTES_PER_URL = 4096
# Rows of earlier runs read back per page of the limit (pages with a document to keep or archive).
KNOWN_PAGES_PER_PAGE = 4


class BudgetSpent(TimeoutError):
    """A bound of the run is reached: the crawl stops here and archives nothing for being unseen."""


class SitemapBudgetSpent(BudgetSpent):
    """The sitemap entries or bytes a run may read are read: the rest stays unread."""


@dataclass
class Budget:
    pages: int
    urls: int
    sitemap_bytes: int
    bytes: int
    seconds: int
    deadline: float  # time.monotonic()
    visited: int = 0
    rows: int = 0
    urls_read: int = 0
    sitemap_bytes_read: int = 0
    bytes_read: int = 0

    @classmethod
    def for_run(cls, *, page_limit: int, limits: SyncLimits) -> Budget:
        pages = max(1, min(page_limit, limits.max_pages))
        urls = pages * SITEMAP_URLS_PER_PAGE
        seconds = limits.max_run_seconds
        return cls(pages=pages, urls=urls, sitemap_bytes=urls * SITEMAP_BYTES_PER_URL,
                   bytes=limits.max_run_bytes, seconds=seconds, deadline=time.monotonic() + seconds)

    @property
    def known(self) -> int:
        return self.pages * KNOWN_PAGES_PER_PAGE

    def spend_bytes(self, count: int) -> None:
        self.bytes_read += count
        if self.bytes_read > self.bytes:
            raise BudgetSpent(f"the run's byte budget of {self.bytes:,} bytes is spent")

    def bytes_left(self) -> int:
        return max(0, self.bytes - self.bytes_read)

    def spend_sitemap_bytes(self, count: int) -> None:
        self.sitemap_bytes_read += count
        if self.sitemap_bytes_read > self.sitemap_bytes:
            raise SitemapBudgetSpent(f"sitemap budget reached: {self.sitemap_bytes:,} bytes of sitemaps read "
                                     f"({SITEMAP_BYTES_PER_URL:,} an entry of {self.urls:,}); the rest is unread")

    def read_url(self) -> None:
        """One sitemap entry read; the one past the bound is not taken."""
        if self.urls_read >= self.urls:
            raise SitemapBudgetSpent(f"sitemap budget reached: {self.urls:,} entries read "
                                     f"({SITEMAP_URLS_PER_PAGE} a page of the limit); the rest is unread")
        self.urls_read += 1

    @property
    def rows_after_pages(self) -> int:
        """Rows left for URLs not requested as pages, once the pages have theirs."""
        return max(0, self.pages - self.visited)

    def as_dict(self) -> dict[str, Any]:
        return {"pages": self.visited, "pages_limit": self.pages, "rows": self.rows,
                "rows_limit": self.pages, "urls_read": self.urls_read, "urls_limit": self.urls,
                "sitemap_bytes_read": self.sitemap_bytes_read, "sitemap_bytes_limit": self.sitemap_bytes,
                "bytes_read": self.bytes_read, "bytes_limit": self.bytes, "seconds_limit": self.seconds}
