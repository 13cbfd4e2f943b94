"""Where a long run's time goes: wall seconds per named stage, summed over the run.

The ingest opens a clock for its run (corpus.ingest.flow, whose stages are INGEST_STAGES); the
code of each stage (the parser driver, the chunker, the encoder backend, the chunk writer)
marks its span with `stage(name)`, which costs two `perf_counter` calls and does nothing
outside a clock. A stage opened inside another is counted to itself only (the writer's `keys`
inside `write rows`), so no second counts twice on one thread. The writer thread runs beside
the encoder, so the stages' seconds add up to more than the run's wall time: that overlap is
the point of the writer thread (docs/performance.md reads them that way).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# An ingest's stages in the order a chunk meets them. `write rows` is the documents' rows and
# the INSERT of the chunks with their vectors and token states (one statement: PostgreSQL
# indexes and stores them, TOAST included).
INGEST_STAGES = ("parse", "chunk", "tokenize", "encode", "pool", "pack states", "keys", "write rows",
                 "statistics")


@dataclass
class _Span:
    name: str
    since: float


@dataclass
class StageClock:
    names: tuple[str, ...] = INGEST_STAGES
    seconds: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _open: threading.local = field(default_factory=threading.local, repr=False)

    def enter(self, name: str) -> None:
        if name not in self.names:
            raise ValueError(f"unknown stage {name!r} (one of {', '.join(self.names)})")
        now = time.perf_counter()
        spans: list[_Span] = self._open.__dict__.setdefault("spans", [])
        if spans:  # the enclosing stage pauses
            self.add(spans[-1].name, now - spans[-1].since)
        spans.append(_Span(name, now))

    def leave(self) -> None:
        now = time.perf_counter()
        spans: list[_Span] = self._open.spans
        span = spans.pop()
        self.add(span.name, now - span.since)
        if spans:
            spans[-1].since = now

    def add(self, name: str, seconds: float) -> None:
        if name not in self.names:
            raise ValueError(f"unknown stage {name!r} (one of {', '.join(self.names)})")
        with self._lock:
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def totals(self) -> dict[str, float]:
        """Every stage in order, 0.0 for one the run never entered."""
        return {name: self.seconds.get(name, 0.0) for name in self.names}


_current: contextvars.ContextVar[StageClock | None] = contextvars.ContextVar("stage_clock", default=None)


@contextmanager
def clock_for_run(clock: StageClock) -> Iterator[StageClock]:
    token = _current.set(clock)
    try:
        yield clock
    finally:
        _current.reset(token)


@contextmanager
def stage(name: str) -> Iterator[None]:
    clock = _current.get()
    if clock is None:
        yield
        return
    clock.enter(name)
    try:
        yield
    finally:
        clock.leave()
