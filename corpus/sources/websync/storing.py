"""Storing one run's outcomes: the fetched pages ingested as documents, what disappeared
archived, and one WebPage row for each URL the run met, within the run's row budget."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django.utils import timezone

from corpus.ingest import store
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.models import Document, WebPage, WebSource
from corpus.ingest.origin import DocumentOrigin
from corpus.ingest.rights import Writer
from corpus.sources.websync import crawl
from corpus.sources.websync.state import LIVE, Outcome, RunState, note, stop
from tenants.models import Tenant
from tenants.rls import tenant_context


def _collapse(state: RunState) -> dict[str, Outcome]:
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


def ingest_fetched(*, tenant: Tenant, source: WebSource, state: RunState, encoder: Encoder | None) -> dict[str, int]:
    """Ingest the fetched pages; the document id of every live canonical URL."""
    chosen = _collapse(state)
    report = state.report
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
        for failed_path, reason in result.failed:
            failed = chosen.get(refs.get(failed_path.split("#", 1)[0], ""))
            if failed is not None:
                _fail(state, failed, reason)
    canonicals = {o.canonical for o in state.outcomes.values() if o.canonical and o.status in LIVE}
    slugs = {c: crawl.slug_path(c) for c in canonicals}
    found = store.find_documents(tenant=tenant, refs=[("doc", s) for s in slugs.values()], audience_ids=None)
    documents = {c: found[("doc", s)] for c, s in slugs.items() if ("doc", s) in found}
    for outcome in chosen.values():
        if outcome.status == WebPage.Status.INGESTED and outcome.canonical not in documents:
            outcome.status, outcome.reason = WebPage.Status.SKIPPED, "no text to index (navigation only)"
            report.skipped_count += 1
            note(report.skipped, {"url": outcome.url, "reason": outcome.reason})
    return documents


def _fail(state: RunState, outcome: Outcome, reason: str) -> None:
    outcome.status, outcome.reason = WebPage.Status.ERROR, reason[:2000]
    note(state.report.errors, {"url": outcome.url, "error": outcome.reason})


def archive_gone(*, tenant: Tenant, state: RunState, documents: dict[str, int]) -> None:
    """Archive the documents of pages that answered 404/410 and, after a complete crawl
    without errors, of pages it no longer reached; a document another live URL still
    resolves to stays."""
    report = state.report
    if report.errors:
        stop(state, "pages failed: nothing is archived for being unseen")
    if state.known_cut:
        stop(state, f"more than {state.budget.known:,} pages known from earlier runs: "
                     "nothing is archived for being unseen")
    if report.complete:
        for url, page in state.known.items():
            if url not in state.outcomes and url not in state.refused_known and page.status in LIVE:
                how = "sitemap" if state.source.kind == WebSource.Kind.SITEMAP else "crawl"
                state.outcomes[url] = Outcome(url=url, status=WebPage.Status.GONE, reason=f"no longer in the {how}")
                state.unseen_gone += 1
                note(report.gone, url)
    live = {documents[o.canonical] for o in state.outcomes.values() if o.status in LIVE and o.canonical in documents}
    gone = {state.known[o.url].document_id for o in state.outcomes.values()
            if o.status == WebPage.Status.GONE and o.url in state.known}
    report.archived = store.archive_documents(tenant=tenant, document_ids=sorted(d for d in gone - live if d))


def _row(tenant: Tenant, state: RunState, outcome: Outcome, documents: dict[str, int], now: Any) -> WebPage:
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


def save_run(*, tenant: Tenant, state: RunState, documents: dict[str, int]) -> None:
    now = timezone.now()
    report, budget = state.report, state.budget
    # The pages requested have their rows; URLs refused before fetching share what is left.
    held = [o for o in state.unvisited.values() if o.url not in state.outcomes]
    room = budget.rows_after_pages
    report.skipped_without_row += sum(1 for o in held[room:] if o.status == WebPage.Status.SKIPPED)
    outcomes = [*state.outcomes.values(), *held[:room]]
    budget.rows = len(outcomes) - state.unseen_gone
    report.budget = budget.as_dict()
    rows = [_row(tenant, state, outcome, documents, now) for outcome in outcomes]
    status = WebSource.Status.SUCCEEDED if report.ok else WebSource.Status.FAILED
    with tenant_context(tenant.id):
        # Index: corpus_webpage_source_url_uniq (tenant_id, source_id, url).
        WebPage.objects.bulk_create(rows, update_conflicts=True, unique_fields=["tenant", "source", "url"],
                                    update_fields=["canonical_url", "etag", "last_modified", "document",
                                                   "status", "http_status", "last_error", "links", "fetched_at"])
        WebSource.objects.filter(tenant=tenant, pk=state.source.pk).update(
            last_status=status, last_run_at=now, last_report=report.as_dict(),
            last_error="" if report.ok else f"{len(report.errors)} page(s) failed")
