"""One run of a web source: crawl, fetch what changed, ingest it, archive what disappeared.

Pages are fetched here and written to a temporary folder, then stored by the same
`ingest_paths` as an upload (the HTML parser, chunking, audiences, statistics and cache
invalidation stay one mechanism), with the page's canonical URL and the fetch time as the
documents' origin. The slug a page is written under (web/<host>/<path>) is its document's
identity, so URLs sharing a canonical URL collapse into one document.

A page unchanged since the last run costs one conditional request (If-None-Match /
If-Modified-Since, answered 304) and is not ingested again. A page answered 404 or 410, or
missing from a complete crawl (or sitemap), is archived with corpus.store.archive_documents;
a crawl cut short by its page limit or time budget archives nothing for being unseen.
"""

from __future__ import annotations

import tempfile
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings
from django.db import connection
from django.utils import timezone

from corpus import store
from corpus.embedding import Encoder
from corpus.ingest import ingest_paths
from corpus.models import Document, WebPage, WebSource
from corpus.origin import DocumentOrigin
from corpus.parsers import ParseError
from corpus.rights import Writer
from corpus.websync import crawl
from corpus.websync.fetch import (Fetcher, Refused, Resolver, Response, RunOutOfTime, UnsafeAddress, origin_of,
                                  system_resolve)
from tenants.models import Tenant
from tenants.rls import tenant_context

# Advisory-lock namespace for "one run per web source at a time" (the second key is the source).
WEBSYNC_LOCK_NAMESPACE = 0x3EB5
GONE = (404, 410)
MAX_LINKS_KEPT = 1000  # same-host links kept per page, to follow again when it answers 304
REPORT_LIST_LIMIT = 500  # the run report keeps this many skipped URLs and errors; page rows keep all


@dataclass
class Outcome:
    """What happened to one URL in this run."""

    url: str
    status: str
    http_status: int | None = None
    canonical: str = ""
    etag: str = ""
    last_modified: str = ""
    reason: str = ""
    body: bytes | None = None  # a fetched page to ingest
    links: list[str] = field(default_factory=list)


@dataclass
class SyncReport:
    source_id: int
    requests: int = 0
    fetched: int = 0
    not_modified: int = 0
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    archived: int = 0
    complete: bool = True
    stopped: str = ""
    skipped: list[dict[str, str]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("skipped", "errors", "gone"):
            data[name] = data[name][:REPORT_LIST_LIMIT]
        return data


@dataclass
class _Crawl:
    source: WebSource
    fetcher: Fetcher
    known: dict[str, WebPage]
    report: SyncReport
    origin: str = ""
    robots: Any = None
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    pages: int = 0


def websync_run(*, tenant: Tenant, source_id: int, encoder: Encoder | None = None,
                resolve: Resolver = system_resolve) -> SyncReport:
    """Run one sync of a source now; the source row records the status and the report."""
    started = time.perf_counter()
    source, known = _load(tenant=tenant, source_id=source_id)
    report = SyncReport(source_id=source.pk)
    with _source_lock(source_id=source.pk) as acquired:
        if not acquired:
            raise RuntimeError(f"another sync of web source {source.pk} is running")
        _set_status(tenant=tenant, source_id=source.pk, status=WebSource.Status.RUNNING)
        try:
            deadline = time.monotonic() + settings.WEBSYNC_MAX_RUN_SECONDS
            with Fetcher(deadline=deadline, resolve=resolve) as fetcher:
                state = _Crawl(source=source, fetcher=fetcher, known=known, report=report)
                _crawl(state)
                report.requests = fetcher.requests
            documents = _ingest(tenant=tenant, source=source, state=state, encoder=encoder)
            _archive_gone(tenant=tenant, state=state, documents=documents)
            report.seconds = round(time.perf_counter() - started, 3)
            _save(tenant=tenant, state=state, documents=documents)
        except Exception as exc:  # the source must say what happened, whatever it was
            _set_status(tenant=tenant, source_id=source.pk, status=WebSource.Status.FAILED,
                        error=f"{type(exc).__name__}: {exc}"[:2000], report=report.as_dict())
            raise
    return report


def _load(*, tenant: Tenant, source_id: int) -> tuple[WebSource, dict[str, WebPage]]:
    with tenant_context(tenant.id):
        # Index: corpus_websource_pkey (tenant_id, id); corpus_webpage_source_url_uniq (tenant_id, source_id, url).
        source = WebSource.objects.select_related("audience").get(tenant=tenant, pk=source_id)
        known = {page.url: page for page in WebPage.objects.filter(tenant=tenant, source_id=source_id)}
    return source, known


@contextmanager
def _source_lock(*, source_id: int) -> Iterator[bool]:
    """One run per source at a time, across processes: a session advisory lock, not waited for."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [WEBSYNC_LOCK_NAMESPACE, source_id])
        acquired = bool(cursor.fetchone()[0])
    try:
        yield acquired
    finally:
        if acquired:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [WEBSYNC_LOCK_NAMESPACE, source_id])


def _set_status(*, tenant: Tenant, source_id: int, status: str, error: str = "",
                report: dict[str, Any] | None = None) -> None:
    fields: dict[str, Any] = {"last_status": status, "last_error": error}
    if status != WebSource.Status.RUNNING:
        fields.update(last_run_at=timezone.now(), last_report=report)
    with tenant_context(tenant.id):
        WebSource.objects.filter(tenant=tenant, pk=source_id).update(**fields)


# --- crawling ---------------------------------------------------------------------------------
def _crawl(state: _Crawl) -> None:
    source = state.source
    start = crawl.normalize(source.start_url)
    state.origin = origin_of(start)
    state.robots = _robots(state)
    if source.kind == WebSource.Kind.SITEMAP:
        queue = deque(_sitemap_pages(state, start))
        follow = False
    else:
        queue, follow = deque([start]), True
    seen = set(queue)
    include, exclude = crawl.patterns(source.include_patterns), crawl.patterns(source.exclude_patterns)
    limit = min(source.page_limit, settings.WEBSYNC_MAX_PAGES)
    while queue:
        url = queue.popleft()
        if state.pages >= limit:
            _stop(state, f"page limit {limit} reached")
            break
        if state.report.stopped or time.monotonic() >= state.fetcher.deadline:
            _stop(state, state.report.stopped or "the run's time budget is spent")
            break
        reason = _refusal(state, url, include=include, exclude=exclude)
        if reason:
            _skip(state, url, reason)
            continue
        state.pages += 1
        links = _visit(state, url)
        for link in links if follow else ():
            link = crawl.normalize(link)
            # Bounded: a page may link to a million URLs; only so many are ever queued.
            if link not in seen and crawl.same_host(link, state.origin) and len(seen) < 4 * limit:
                seen.add(link)
                queue.append(link)


def _stop(state: _Crawl, why: str) -> None:
    state.report.complete = False
    state.report.stopped = why


def _refusal(state: _Crawl, url: str, *, include: list[str], exclude: list[str]) -> str | None:
    if not crawl.same_host(url, state.origin):
        return f"not on {state.origin}"
    reason = crawl.pattern_reason(url, include=include, exclude=exclude)
    if reason:
        return reason
    if not crawl.robots_allow(state.robots, url):
        return "disallowed by robots.txt"
    return None


def _skip(state: _Crawl, url: str, reason: str) -> None:
    state.outcomes[url] = Outcome(url=url, status=WebPage.Status.SKIPPED, reason=reason)
    state.report.skipped.append({"url": url, "reason": reason})


def _error(state: _Crawl, url: str, reason: str, http_status: int | None = None) -> None:
    state.outcomes[url] = Outcome(url=url, status=WebPage.Status.ERROR, reason=reason, http_status=http_status)
    state.report.errors.append({"url": url, "error": reason})


def _robots(state: _Crawl) -> Any:
    """The host's robots.txt; refusals of the host itself (an unsafe address) end the run."""
    url = f"{state.origin}/robots.txt"
    try:
        response = state.fetcher.get(url, same_host=state.origin)
    except UnsafeAddress:
        raise  # the host itself is refused: the run fails, naming why
    except (httpx.HTTPError, OSError, TimeoutError, ValueError) as exc:
        # Unreadable robots.txt disallows everything (RFC 9309); the error keeps pages unarchived.
        state.report.errors.append({"url": url, "error": f"robots.txt unreadable, nothing fetched: {exc}"})
        return crawl.robots_from(None, b"")
    robots = crawl.robots_from(response.status, response.body)
    delay = crawl.robots_delay(robots)
    if delay is not None:
        state.fetcher.delay = max(state.fetcher.delay, min(delay, 60.0))
    return robots


def _sitemap_pages(state: _Crawl, url: str) -> list[str]:
    """Page URLs of a sitemap (and of the sitemaps an index names, one level, same host)."""
    pages: list[str] = []
    sitemaps, done = [url], 0
    while sitemaps and done < 50:
        current = sitemaps.pop(0)
        done += 1
        try:
            response = state.fetcher.get(current, same_host=state.origin)
            if response.status != 200:
                raise ValueError(f"HTTP {response.status}")
            found, nested = crawl.sitemap_urls(response.body)
        except (httpx.HTTPError, OSError, TimeoutError, ValueError, SyntaxError) as exc:
            if current == url:
                raise ValueError(f"sitemap {url} unreadable: {exc}") from exc
            _error(state, current, f"sitemap unreadable: {exc}")
            continue
        pages.extend(crawl.normalize(p) for p in found)
        if current == url:
            sitemaps.extend(crawl.normalize(n) for n in nested if crawl.same_host(n, state.origin))
    return list(dict.fromkeys(pages))


def _conditional(page: WebPage | None) -> dict[str, str]:
    """Validators of the last good fetch; none when there is no live document to keep."""
    if page is None or page.document_id is None or page.status == WebPage.Status.GONE:
        return {}
    headers = {"If-None-Match": page.etag} if page.etag else {}
    if page.last_modified:
        headers["If-Modified-Since"] = page.last_modified
    return headers


def _visit(state: _Crawl, url: str) -> list[str]:
    """Fetch one page and record its outcome; the links to follow from it."""
    known = state.known.get(url)
    try:
        response = state.fetcher.get(url, headers=_conditional(known), same_host=state.origin)
    except Refused as exc:
        _skip(state, url, f"refused: {exc}")
        return []
    except RunOutOfTime as exc:
        _stop(state, str(exc))
        return []
    except (httpx.HTTPError, OSError, TimeoutError) as exc:
        _error(state, url, f"{type(exc).__name__}: {exc}"[:500])
        return []
    if response.status == 304 and known is not None:
        state.outcomes[url] = Outcome(url=url, status=WebPage.Status.UNCHANGED, http_status=304,
                                      canonical=known.canonical_url, etag=response.headers.get("etag", known.etag),
                                      last_modified=response.headers.get("last-modified", known.last_modified),
                                      links=list(known.links or []))
        state.report.not_modified += 1
        return list(known.links or [])
    if response.status in GONE:
        state.outcomes[url] = Outcome(url=url, status=WebPage.Status.GONE, http_status=response.status,
                                      reason=f"HTTP {response.status}")
        state.report.gone.append(url)
        return []
    if response.status != 200:
        _error(state, url, f"HTTP {response.status}", response.status)
        return []
    if response.content_type and response.content_type not in crawl.HTML_TYPES:
        _skip(state, url, f"not HTML ({response.content_type})")
        return []
    return _fetched(state, url, response)


def _fetched(state: _Crawl, url: str, response: Response) -> list[str]:
    try:
        links, canonical = crawl.page_links(response.body, response.url)
    except ParseError as exc:
        _error(state, url, f"unreadable HTML: {exc}", 200)
        return []
    # The document's identity: its canonical URL when that is on this host, else where it was found.
    identity = crawl.normalize(canonical) if canonical and crawl.same_host(canonical, state.origin) \
        else crawl.normalize(response.url)
    kept = list(dict.fromkeys(crawl.normalize(link) for link in links
                              if crawl.same_host(link, state.origin)))[:MAX_LINKS_KEPT]
    notes = [f"redirected to {response.url}"] if response.redirects else []
    if identity != crawl.normalize(response.url):
        notes.append(f"canonical {identity}")
    state.outcomes[url] = Outcome(url=url, status=WebPage.Status.INGESTED, http_status=200, canonical=identity,
                                  etag=response.headers.get("etag", ""),
                                  last_modified=response.headers.get("last-modified", ""),
                                  reason="; ".join(notes), body=response.body, links=kept)
    state.report.fetched += 1
    return kept


# --- storing ----------------------------------------------------------------------------------
LIVE = (WebPage.Status.INGESTED, WebPage.Status.UNCHANGED, WebPage.Status.DUPLICATE)


def _collapse(state: _Crawl) -> dict[str, Outcome]:
    """One fetched page per canonical URL (the one found at that URL, else the first); the
    others are duplicates of it."""
    chosen: dict[str, Outcome] = {}
    for outcome in state.outcomes.values():
        if outcome.body is None:
            continue
        current = chosen.get(outcome.canonical)
        if current is None or (outcome.url == outcome.canonical and current.url != current.canonical):
            chosen[outcome.canonical] = outcome
    for outcome in state.outcomes.values():
        if outcome.body is not None and chosen[outcome.canonical] is not outcome:
            outcome.status = WebPage.Status.DUPLICATE
            outcome.reason = f"same canonical URL {outcome.canonical} as {chosen[outcome.canonical].url}"
            outcome.body = None
    return chosen


def _ingest(*, tenant: Tenant, source: WebSource, state: _Crawl, encoder: Encoder | None) -> dict[str, int]:
    """Ingest the fetched pages; the document id of every live canonical URL."""
    chosen = _collapse(state)
    report = state.report
    path: Path | str  # a file written, then a failed path as the ingest reports it
    outcome: Outcome | None
    if chosen:
        audience = source.audience.slug
        with tempfile.TemporaryDirectory(prefix="websync-") as temporary:
            folder = Path(temporary).resolve()
            refs: dict[str, str] = {}
            for canonical, outcome in chosen.items():
                path = folder / f"{crawl.slug_path(canonical)}.html"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(outcome.body or b"")
                refs[str(path)] = canonical
            result = ingest_paths(tenant=tenant, paths=[folder], audience=audience, source_type="doc",
                                  writer=Writer.holding([audience]), encoder=encoder,
                                  origin=DocumentOrigin(kind=Document.Origin.WEBSITE, refs=refs,
                                                        fetched_at=timezone.now()))
        report.added, report.changed, report.unchanged = result.added, result.changed, result.unchanged
        for path, reason in result.failed:
            outcome = chosen.get(refs.get(path.split("#", 1)[0], ""))
            if outcome is not None:
                _fail(state, outcome, reason)
    canonicals = {o.canonical for o in state.outcomes.values() if o.canonical and o.status in LIVE}
    slugs = {c: crawl.slug_path(c) for c in canonicals}
    found = store.find_documents(tenant=tenant, refs=[("doc", s) for s in slugs.values()], audience_ids=None)
    documents = {c: found[("doc", s)] for c, s in slugs.items() if ("doc", s) in found}
    for outcome in chosen.values():
        if outcome.status == WebPage.Status.INGESTED and outcome.canonical not in documents:
            outcome.status, outcome.reason = WebPage.Status.SKIPPED, "no text to index (navigation only)"
            report.skipped.append({"url": outcome.url, "reason": outcome.reason})
    return documents


def _fail(state: _Crawl, outcome: Outcome, reason: str) -> None:
    outcome.status, outcome.reason = WebPage.Status.ERROR, reason[:2000]
    state.report.errors.append({"url": outcome.url, "error": outcome.reason})


def _archive_gone(*, tenant: Tenant, state: _Crawl, documents: dict[str, int]) -> None:
    """Archive the documents of pages that answered 404/410 and, after a complete crawl
    without errors, of pages it no longer reached; a document another live URL still
    resolves to stays."""
    report = state.report
    if report.errors:
        _stop(state, report.stopped or "pages failed: nothing is archived for being unseen")
    if report.complete:
        for url, page in state.known.items():
            if url not in state.outcomes and page.status in LIVE:
                how = "sitemap" if state.source.kind == WebSource.Kind.SITEMAP else "crawl"
                state.outcomes[url] = Outcome(url=url, status=WebPage.Status.GONE, reason=f"no longer in the {how}")
                report.gone.append(url)
    live = {documents[o.canonical] for o in state.outcomes.values() if o.status in LIVE and o.canonical in documents}
    gone = {state.known[o.url].document_id for o in state.outcomes.values()
            if o.status == WebPage.Status.GONE and o.url in state.known}
    report.archived = store.archive_documents(tenant=tenant, document_ids=sorted(d for d in gone - live if d))


def _row(tenant: Tenant, state: _Crawl, outcome: Outcome, documents: dict[str, int], now: Any) -> WebPage:
    known = state.known.get(outcome.url)
    good = outcome.status in LIVE
    keep = known is not None and not good  # an error keeps the last good fetch's validators
    return WebPage(
        tenant=tenant, source_id=state.source.pk, url=outcome.url[:2000],
        canonical_url=(outcome.canonical or (known.canonical_url if known else ""))[:2000],
        etag=(known.etag if keep and known else outcome.etag)[:500],
        last_modified=(known.last_modified if keep and known else outcome.last_modified)[:100],
        document_id=documents.get(outcome.canonical) if good else (known.document_id if known else None),
        status=outcome.status, http_status=outcome.http_status, last_error=outcome.reason[:2000],
        links=outcome.links if good else (list(known.links or []) if known else []),
        fetched_at=now if outcome.http_status is not None else (known.fetched_at if known else None),
    )


def _save(*, tenant: Tenant, state: _Crawl, documents: dict[str, int]) -> None:
    now = timezone.now()
    rows = [_row(tenant, state, outcome, documents, now) for outcome in state.outcomes.values()]
    report = state.report
    status = WebSource.Status.SUCCEEDED if report.ok else WebSource.Status.FAILED
    with tenant_context(tenant.id):
        # Index: corpus_webpage_source_url_uniq (tenant_id, source_id, url).
        WebPage.objects.bulk_create(rows, update_conflicts=True, unique_fields=["tenant", "source", "url"],
                                    update_fields=["canonical_url", "etag", "last_modified", "document",
                                                   "status", "http_status", "last_error", "links", "fetched_at"])
        WebSource.objects.filter(tenant=tenant, pk=state.source.pk).update(
            last_status=status, last_run_at=now, last_report=report.as_dict(),
            last_error="" if report.ok else f"{len(report.errors)} page(s) failed")
