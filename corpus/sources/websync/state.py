"""What one sync run knows while it runs, and the report it leaves: shared by the crawl
(corpus.sources.websync.sync) and the storing of its outcomes (corpus.sources.websync.storing)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from corpus.models import WebPage, WebSource
from corpus.sources.websync.budget import Budget
from corpus.sources.websync.fetch import Fetcher

_T = TypeVar("_T")
REPORT_LIST_LIMIT = 500  # the run report names this many skipped URLs, errors and gone pages; it counts all
LIVE = (WebPage.Status.INGESTED, WebPage.Status.UNCHANGED, WebPage.Status.DUPLICATE)


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
    skipped_count: int = 0  # every URL left out, named in `skipped` up to REPORT_LIST_LIMIT
    skipped_without_row: int = 0  # of those, the ones past the run's row budget: counted, not stored
    budget: dict[str, int] = field(default_factory=dict)
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
class RunState:
    source: WebSource
    fetcher: Fetcher
    budget: Budget
    known: dict[str, WebPage]
    report: SyncReport
    known_cut: bool = False  # more pages known from earlier runs than the budget reads back
    origin: str = ""
    robots: Any = None
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # URLs requested as pages (and gone ones)
    unvisited: dict[str, Outcome] = field(default_factory=dict)  # refused before fetching: rows while rows remain
    unseen_gone: int = 0  # known pages marked gone for being unseen (their rows are updated, not added)
    refused_known: set[str] = field(default_factory=set)  # known URLs refused this run: seen, not gone
    halted: bool = False


def note(items: list[_T], item: _T) -> None:
    if len(items) < REPORT_LIST_LIMIT:
        items.append(item)


def stop(state: RunState, why: str) -> None:
    """The run is cut short (nothing is archived for being unseen); the first reason is kept."""
    state.report.complete = False
    state.report.stopped = state.report.stopped or why
