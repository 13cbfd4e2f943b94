"""One run of a web source: crawl, fetch what changed, ingest it, archive what disappeared.

Pages are fetched here and written to a temporary folder, then stored by the same
`ingest_paths` as an upload (the HTML parser, chunking, audiences, statistics and cache
invalidation stay one mechanism), with the page's canonical URL and the fetch time as the
documents' origin. The slug a page is written under (web/<host>/<path>) is its document's
identity, so URLs sharing a canonical URL collapse into one document.

A page unchanged since the last run costs one conditional request (If-None-Match /
If-Modified-Since, answered 304) and is not ingested again. A page answered 404 or 410, or
missing from a complete crawl (or sitemap), is archived with corpus.ingest.store.archive_documents;
a crawl cut short by its page limit or by a bound of its budget (corpus.sources.websync.budget)
archives nothing for being unseen. The outcomes are stored by corpus.sources.websync.storing.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from django.db import connection
from django.db.models import F
from django.utils import timezone

from corpus.encoders.embedding import Encoder
from corpus.config import SyncLimits
from corpus.models import WebPage, WebSource
from corpus.parsers import ParseError
from corpus.sources.websync import crawl
from corpus.sources.websync.budget import Budget, BudgetSpent
from corpus.sources.websync.fetch import Fetcher, Refused, Resolver, Response, UnsafeAddress, origin_of, system_resolve
from corpus.sources.websync.sitemaps import read_sitemaps
from corpus.sources.websync.state import Outcome, RunState, SyncReport, note, stop
from corpus.sources.websync.storing import archive_gone, ingest_fetched, save_run
from tenants.models import Tenant
from tenants.rls import tenant_context

# Advisory-lock namespace for "one run per web source at a time" (the second key is the source).
WEBSYNC_LOCK_NAMESPACE = 0x3EB5
GONE = (404, 410)
MAX_LINKS_KEPT = 1000  # same-host links kept per page, to follow again when it answers 304


def websync_run(*, tenant: Tenant, source_id: int, encoder: Encoder | None = None,
                resolve: Resolver = system_resolve) -> SyncReport:
    """Run one sync of a source now; the source row records the status and the report."""
    started = time.perf_counter()
    source = _load(tenant=tenant, source_id=source_id)
    report = SyncReport(source_id=source.pk)
    with _source_lock(source_id=source.pk) as acquired:
        if not acquired:
            raise RuntimeError(f"another sync of web source {source.pk} is running")
        _set_status(tenant=tenant, source_id=source.pk, status=WebSource.Status.RUNNING)
        limits = SyncLimits.from_settings()
        budget = Budget.for_run(page_limit=source.page_limit, limits=limits)
        try:
            known, cut = _load_known(tenant=tenant, source_id=source.pk, bound=budget.known)
            with Fetcher(deadline=budget.deadline, resolve=resolve, budget=budget, limits=limits) as fetcher:
                state = RunState(source=source, fetcher=fetcher, budget=budget, known=known, known_cut=cut,
                               report=report)
                _crawl(state)
                report.requests = fetcher.requests
            documents = ingest_fetched(tenant=tenant, source=source, state=state, encoder=encoder)
            archive_gone(tenant=tenant, state=state, documents=documents)
            report.seconds = round(time.perf_counter() - started, 3)
            save_run(tenant=tenant, state=state, documents=documents)
        except Exception as exc:  # the source must say what happened, whatever it was
            report.budget = budget.as_dict()
            _set_status(tenant=tenant, source_id=source.pk, status=WebSource.Status.FAILED,
                        error=f"{type(exc).__name__}: {exc}"[:2000], report=report.as_dict())
            raise
    return report


def _load(*, tenant: Tenant, source_id: int) -> WebSource:
    with tenant_context(tenant.id):
        # Index: corpus_websource_pkey (tenant_id, id).
        return WebSource.objects.select_related("audience").get(tenant=tenant, pk=source_id)


def _load_known(*, tenant: Tenant, source_id: int, bound: int) -> tuple[dict[str, WebPage], bool]:
    """The pages of earlier runs a run needs (those holding a live document: validators, links,
    what to archive), at most `bound`, most recently fetched first; and whether there were more.
    Rows of refused URLs are records only and are never read back."""
    with tenant_context(tenant.id):
        # Index: corpus_webpage_source_url_uniq (tenant_id, source_id, url).
        rows = list(WebPage.objects.filter(tenant=tenant, source_id=source_id, document__isnull=False)
                    .exclude(status=WebPage.Status.GONE).order_by(F("fetched_at").desc(nulls_last=True), "url")
                    [:bound + 1])
    return {page.url: page for page in rows[:bound]}, len(rows) > bound


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
def _crawl(state: RunState) -> None:
    source = state.source
    start = crawl.normalize(source.start_url)
    state.origin = origin_of(start)
    state.robots = _robots(state)
    state.include, state.exclude = crawl.patterns(source.include_patterns), crawl.patterns(source.exclude_patterns)
    limit = state.budget.pages
    if source.kind == WebSource.Kind.SITEMAP:
        # One page past the limit is read, so that a longer sitemap stops the crawl as cut short.
        read = read_sitemaps(fetcher=state.fetcher, budget=state.budget, url=start, origin=state.origin,
                             want=limit + 1, refusal=lambda url: _refusal(state, url),
                             skip=lambda url, reason: _refuse(state, url, reason),
                             failed=lambda url, reason: _unvisited_error(state, url, reason))
        if read.stopped:
            stop(state, read.stopped)
        queue, follow = deque(read.pages), False
    else:
        queue, follow = deque([start]), True
    seen = set(queue)
    while queue:
        url = queue.popleft()
        if state.budget.visited >= limit:
            stop(state, f"page limit {limit} reached")
            break
        if state.halted or time.monotonic() >= state.fetcher.deadline:
            stop(state, "the run's time budget is spent")
            break
        reason = _refusal(state, url)
        if reason:
            _refuse(state, url, reason)
            continue
        state.budget.visited += 1
        links = _visit(state, url)
        for link in links if follow else ():
            link = crawl.normalize(link)
            # Bounded: a page may link to a million URLs; only so many are ever queued.
            if link not in seen and crawl.same_host(link, state.origin) and len(seen) < 4 * limit:
                seen.add(link)
                queue.append(link)


def _refusal(state: RunState, url: str) -> str | None:
    if not crawl.same_host(url, state.origin):
        return f"not on {state.origin}"
    reason = crawl.pattern_reason(url, include=state.include, exclude=state.exclude)
    if reason:
        return reason
    if not crawl.robots_allow(state.robots, url):
        return "disallowed by robots.txt"
    return None


def _skip(state: RunState, url: str, reason: str) -> None:
    """A URL requested as a page and not ingested: it has its row."""
    state.outcomes[url] = Outcome(url=url, status=WebPage.Status.SKIPPED, reason=reason)
    state.report.skipped_count += 1
    note(state.report.skipped, {"url": url, "reason": reason})


def _refuse(state: RunState, url: str, reason: str) -> None:
    """A URL left out before fetching: counted always, a row only within the run's row budget."""
    state.report.skipped_count += 1
    note(state.report.skipped, {"url": url, "reason": reason})
    if url in state.known:
        state.refused_known.add(url)
    _hold(state, Outcome(url=url, status=WebPage.Status.SKIPPED, reason=reason))


def _hold(state: RunState, outcome: Outcome) -> None:
    # At most a page limit's worth is held: the rows left after the pages' are chosen among them.
    if outcome.url in state.unvisited:
        return
    if len(state.unvisited) < state.budget.pages:
        state.unvisited[outcome.url] = outcome
    elif outcome.status == WebPage.Status.SKIPPED:
        state.report.skipped_without_row += 1


def _error(state: RunState, url: str, reason: str, http_status: int | None = None) -> None:
    state.outcomes[url] = Outcome(url=url, status=WebPage.Status.ERROR, reason=reason, http_status=http_status)
    note(state.report.errors, {"url": url, "error": reason})


def _unvisited_error(state: RunState, url: str, reason: str) -> None:
    """A nested sitemap that could not be read: an error of the run, a row within the budget."""
    note(state.report.errors, {"url": url, "error": reason})
    _hold(state, Outcome(url=url, status=WebPage.Status.ERROR, reason=reason))


def _robots(state: RunState) -> Any:
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


def _conditional(page: WebPage | None) -> dict[str, str]:
    """Validators of the last good fetch; none when there is no live document to keep."""
    if page is None or page.document_id is None or page.status == WebPage.Status.GONE:
        return {}
    headers = {"If-None-Match": page.etag} if page.etag else {}
    if page.last_modified:
        headers["If-Modified-Since"] = page.last_modified
    return headers


def _visit(state: RunState, url: str) -> list[str]:
    """Fetch one page and record its outcome; the links to follow from it."""
    known = state.known.get(url)
    try:
        response = state.fetcher.get(url, headers=_conditional(known), same_host=state.origin)
    except Refused as exc:
        _skip(state, url, f"refused: {exc}")
        return []
    except BudgetSpent as exc:
        state.halted = True
        stop(state, str(exc))
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
        note(state.report.gone, url)
        return []
    if response.status != 200:
        _error(state, url, f"HTTP {response.status}", response.status)
        return []
    if response.content_type and response.content_type not in crawl.HTML_TYPES:
        _skip(state, url, f"not HTML ({response.content_type})")
        return []
    return _fetched(state, url, response)


def _fetched(state: RunState, url: str, response: Response) -> list[str]:
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
