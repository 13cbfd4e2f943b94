"""Website sync is bounded per run whatever the sitemap says (issue 45 item 3): URLs read, rows
stored, bytes and time, against a real server on loopback that generates a 50 × 50,000 sitemap
index as it is read (nothing written to disk).

Seen red on the code before the budget (each test copied with the budget constants written in,
the code of corpus/sources/websync stashed): at SITEMAPS, ENTRIES = 3, 20_000 (the issue's shape) the
first test found 2,000 WebPage rows for a page limit of 20, a row for every robots-refused URL
before the 20th page, after all three sitemaps were read; at the full 50 × 50,000 the old run
spent its whole 20 s budget reading sitemaps and wrote an error row for each one left unread
(24 rows). The second test found the endless sitemap read to its 5 MB response limit and the
next sitemap asked for; the third found 20,164 rows of earlier runs read back.
"""

from __future__ import annotations

import gzip
import itertools
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.db.models.signals import post_init

from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.models import WebPage, WebSource
from corpus.sources.websync.budget import KNOWN_PAGES_PER_PAGE, SITEMAP_BYTES_PER_URL, SITEMAP_URLS_PER_PAGE
from corpus.sources.websync.sources import websource_save
from corpus.sources.websync.sync import websync_run
from tenants.models import Audience
from tenants.rls import tenant_context

pytestmark = pytest.mark.django_db

SITEMAPS, ENTRIES = 50, 50_000  # the protocol's own ceilings: 50 × 50,000 = 2.5 million URLs
EVERY = 100  # one entry in EVERY is a page robots.txt allows; the rest are under /private/
LIMIT = 20
RUN_SECONDS = 20


@dataclass
class Served:
    """What the hostile site was asked and how much it managed to send."""

    base: str = ""
    requests: Counter[str] = field(default_factory=Counter)
    sent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def entries(base: str, sitemap: int) -> Iterator[bytes]:
    yield b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    for start in range(0, ENTRIES, 1000):
        yield "".join(
            f"<url><loc>{base}/{'docs' if n % EVERY == EVERY - 1 else 'private'}/{sitemap}/{n}</loc></url>"
            for n in range(start, start + 1000)).encode()
    yield b"</urlset>"


def hostile_bodies(base: str, path: str) -> tuple[dict[str, str], Iterator[bytes]] | None:
    """(headers, body pieces) for `path`, or None for 404."""
    xml = {"Content-Type": "application/xml"}
    if path == "/robots.txt":
        return {"Content-Type": "text/plain"}, iter([b"User-agent: *\nDisallow: /private/\n"])
    if path == "/sitemap.xml":
        names = "".join(f"<sitemap><loc>{base}/sitemaps/{n}.xml</loc></sitemap>" for n in range(SITEMAPS))
        return xml, iter([f'<?xml version="1.0"?><sitemapindex>{names}</sitemapindex>'.encode()])
    if match := re.fullmatch(r"/sitemaps/(\d+)\.xml", path):
        return xml, entries(base, int(match[1]))
    if path == "/bad/index.xml":
        names = "".join(f"<sitemap><loc>{base}/bad/{n}</loc></sitemap>"
                        for n in ("gzip.xml", "raw.xml.gz", "declared.xml", "good.xml", "padding.xml", "after.xml"))
        return xml, iter([f"<sitemapindex>{names}</sitemapindex>".encode()])
    if path == "/bad/gzip.xml":  # a gzip bomb sent although identity was asked for
        return {**xml, "Content-Encoding": "gzip"}, iter([gzip.compress(b"<" * 20_000_000)])
    if path == "/bad/raw.xml.gz":  # a .gz sitemap is not inflated: it is unreadable XML
        return {"Content-Type": "application/gzip"}, iter([gzip.compress(b" " * 20_000_000)])
    if path == "/bad/declared.xml":
        return {**xml, "Content-Length": str(10**12)}, iter([b"<urlset>"])
    if path == "/bad/good.xml":
        return xml, iter([f"<urlset><url><loc>{base}/docs/good/0</loc></url></urlset>".encode()])
    if path == "/bad/padding.xml":  # no URL at all, only whitespace, for ever
        return xml, itertools.chain([b"<urlset>"], itertools.repeat(b" " * 65536, 100_000))
    if path.startswith("/docs/"):
        text = f"Page {path} explains how anvil model {path.replace('/', '-')} is delivered by freight."
        return ({"Content-Type": "text/html"},
                iter([f"<!doctype html><html><head><title>{path}</title></head><body><p>{text}</p></body></html>"
                      .encode()]))
    return None


def handler(served: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            with served.lock:
                served.requests[self.path] += 1
            answer = hostile_bodies(served.base, self.path)
            if answer is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            headers, pieces = answer
            self.send_response(200)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()  # no Content-Length unless declared: the body ends when the server closes
            try:
                for piece in pieces:
                    self.wfile.write(piece)
                    with served.lock:
                        served.sent += len(piece)
            except OSError:
                pass  # the reader stopped reading: that is the point

    return Handler


@pytest.fixture
def hostile(settings: Any) -> Iterator[Served]:
    settings.WEBSYNC_ALLOW_PRIVATE_ADDRESSES = True
    settings.WEBSYNC_DELAY_SECONDS = 0.0
    settings.WEBSYNC_MAX_RUN_SECONDS = RUN_SECONDS
    served = Served()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(served))
    server.daemon_threads = True
    served.base = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield served
    server.shutdown()
    server.server_close()


def run(cast: Cast, url: str, encoder: Encoder) -> tuple[Any, WebSource, int, float]:
    audience = Audience.objects.get(tenant=cast.tenant, slug="public")
    source = websource_save(tenant=cast.tenant, audience=audience,
                            values={"start_url": url, "kind": "sitemap", "page_limit": LIMIT, "schedule": "manual"})
    started = time.monotonic()
    report = websync_run(tenant=cast.tenant, source_id=source.pk, encoder=encoder)
    seconds = time.monotonic() - started
    with tenant_context(cast.tenant.id):
        source.refresh_from_db()
        rows = WebPage.objects.filter(tenant=cast.tenant, source=source).count()
    return report, source, rows, seconds


def test_a_50_by_50000_sitemap_index_is_read_only_up_to_the_runs_budget(
        acme: Cast, encoder: Encoder, hostile: Served) -> None:
    report, source, rows, seconds = run(acme, f"{hostile.base}/sitemap.xml", encoder)

    assert rows <= LIMIT, f"{rows} WebPage rows for a page limit of {LIMIT}"
    assert seconds < RUN_SECONDS
    # Reading stopped inside the first sitemap: the other 49 were never asked for.
    sitemaps = [path for path in hostile.requests if path.startswith("/sitemaps/")]
    assert sitemaps == ["/sitemaps/0.xml"]
    assert hostile.sent < 16 * 1024 * 1024  # of about 150 MB; the rest is what sockets buffer
    budget = report.budget
    assert budget["urls_read"] <= budget["urls_limit"] == SITEMAP_URLS_PER_PAGE * LIMIT
    assert budget["bytes_read"] <= budget["bytes_limit"]
    assert budget["sitemap_bytes_read"] <= SITEMAP_BYTES_PER_URL * budget["urls_limit"] + 65536
    assert budget["rows"] == rows
    assert not report.complete and report.stopped.startswith("sitemap budget reached")
    assert report.archived == 0
    # Every URL read and left out is counted; only the first few have a row, none beyond the limit.
    fetched = sum(1 for path in hostile.requests if path.startswith("/docs/"))
    assert report.fetched == fetched > 0
    assert report.skipped_count == budget["urls_read"] - fetched
    assert report.skipped_without_row == report.skipped_count - (rows - fetched) > 900
    assert source.last_report is not None and source.last_report["skipped_count"] == report.skipped_count
    assert len(report.as_dict()["skipped"]) <= 500


def test_gzip_declared_and_endless_sitemaps_stay_inside_the_budget(
        acme: Cast, encoder: Encoder, hostile: Served) -> None:
    report, source, rows, seconds = run(acme, f"{hostile.base}/bad/index.xml", encoder)

    assert seconds < RUN_SECONDS and rows <= LIMIT
    errors = {e["url"].rsplit("/", 1)[1]: e["error"] for e in report.errors}
    assert "gzip-encoded although identity was asked for" in errors["gzip.xml"]
    assert "sitemap unreadable" in errors["raw.xml.gz"]
    assert "declares 1,000,000,000,000 bytes" in errors["declared.xml"]
    assert report.fetched == 1 and hostile.requests["/docs/good/0"] == 1
    # The endless whitespace is cut off by the sitemap byte budget; what comes after is unread.
    assert report.stopped.startswith("sitemap budget reached")
    assert hostile.requests["/bad/after.xml"] == 0
    assert report.budget["sitemap_bytes_read"] <= SITEMAP_BYTES_PER_URL * report.budget["urls_limit"] + 65536
    assert hostile.sent < 64 * 1024 * 1024
    assert source.last_status == "failed"


def test_rows_of_earlier_runs_are_read_back_only_within_the_budget(
        acme: Cast, encoder: Encoder, hostile: Served) -> None:
    """An earlier, unbounded run left thousands of rows: the next run reads back only the pages
    holding a document, at most KNOWN_PAGES_PER_PAGE a page of the limit, and then archives
    nothing for being unseen, since it cannot know what it did not read."""
    report, source, _, _ = run(acme, f"{hostile.base}/bad/good.xml", encoder)
    assert report.added == 1
    with tenant_context(acme.tenant.id):
        page = WebPage.objects.get(tenant=acme.tenant, source=source, url=f"{hostile.base}/docs/good/0")
        WebPage.objects.bulk_create(
            [WebPage(tenant=acme.tenant, source=source, url=f"{hostile.base}/private/old/{n}", status="skipped",
                     last_error="disallowed by robots.txt") for n in range(20_000)]
            + [WebPage(tenant=acme.tenant, source=source, url=f"{hostile.base}/docs/old/{n}", status="ingested",
                       document_id=page.document_id) for n in range(KNOWN_PAGES_PER_PAGE * LIMIT + 1)])
    loaded: list[WebPage] = []

    def count(sender: type, instance: WebPage, **kwargs: Any) -> None:
        loaded.append(instance)

    post_init.connect(count, sender=WebPage)
    try:
        second = websync_run(tenant=acme.tenant, source_id=source.pk, encoder=encoder)
    finally:
        post_init.disconnect(count, sender=WebPage)
    assert len(loaded) <= (KNOWN_PAGES_PER_PAGE + 1) * LIMIT + 2, f"{len(loaded)} rows of earlier runs read back"
    assert second.stopped == f"more than {KNOWN_PAGES_PER_PAGE * LIMIT} pages known from earlier runs: " \
                             "nothing is archived for being unseen"
    assert second.archived == 0 and second.gone == []
