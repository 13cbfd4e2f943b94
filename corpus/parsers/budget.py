"""What one file may cost to parse: its size, its lines and fields, and a time budget
(docs/decisions/0032).

Parsers are written to be linear in their input; the budget is the backstop for what is not
ours to make linear (pypdf, lexbor) and for the bug we have not found yet. Python cannot
interrupt a running regex or C call, so the deadline is cooperative: parsers call `tick()`
in their loops and the file fails alone, with a reason, once its budget is spent.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

import yaml

from corpus.config import ParseLimits
from corpus.parsers import ParsedDocument, ParseError, ParseFailure

MAX_FRONT_MATTER_CHARS = 16_384
MAX_MANIFEST_CHARS = 262_144
MAX_YAML_DEPTH = 16
# Field caps: a title is read on every answer page and a slug is an address, not a document.
FIELD_LIMITS: Mapping[str, int] = {
    "title": 500,
    "slug": 300,
    "entry id": 200,
    "audience": 64,
    "version": 100,
    "supersedes": 300,
    "heading": 500,
}
INTERNAL = "internal parser error"  # the prefix of a reason no input should ever produce

T = TypeVar("T")


# The limits of the parse under way: ingest's configuration, set once around its parsing
# (parse_limits) so the parsers, however deep and whoever wrote them, read the same values.
_limits: ContextVar[ParseLimits | None] = ContextVar("parse_limits", default=None)


@contextmanager
def parse_limits(limits: ParseLimits) -> Iterator[ParseLimits]:
    token = _limits.set(limits)
    try:
        yield limits
    finally:
        _limits.reset(token)


def current_limits() -> ParseLimits:
    """The limits set by the ingest under way; a parser called on its own gets the configured ones."""
    return _limits.get() or ParseLimits.from_settings()


def parse_seconds() -> float:
    return current_limits().seconds


def seconds_for(size: int) -> float:
    return current_limits().seconds_for(size)


def max_line_chars() -> int:
    return current_limits().max_line_chars


class BudgetExceeded(ParseError):
    """The file's time is up: the whole file fails, not just the entry being read."""


class Deadline:
    __slots__ = ("seconds", "expires")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expires = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self.expires:
            raise BudgetExceeded(f"parse budget of {self.seconds:g} s exceeded")


_current: ContextVar[Deadline | None] = ContextVar("parse_deadline", default=None)


def tick() -> None:
    """Raise ParseError once the current file's budget is spent (no-op outside a budget)."""
    deadline = _current.get()
    if deadline is not None:
        deadline.check()


@contextmanager
def file_budget(seconds: float | None = None) -> Iterator[Deadline]:
    deadline = Deadline(parse_seconds() if seconds is None else seconds)
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)


def guarded(source_path: str, work: Callable[[], T]) -> T | ParseFailure:
    """Run one file's parse under its budget; any failure is that file's alone, with a reason.

    Call it and yield its result outside: a generator that yielded inside the budget would
    charge the consumer's time to the file."""
    try:
        size = os.stat(source_path).st_size
    except OSError:
        size = 0  # the parser's own read names the problem
    with file_budget(seconds_for(size)):
        try:
            return work()
        except (ParseError, OSError) as exc:
            return ParseFailure(source_path, str(exc) or exc.__class__.__name__)
        except RecursionError:
            return ParseFailure(source_path, "nested too deeply to parse")
        except MemoryError:
            return ParseFailure(source_path, "too large to parse in memory")
        except Exception as exc:  # noqa: BLE001 - a parser bug must not stop the other files
            return ParseFailure(source_path, f"{INTERNAL}: {exc.__class__.__name__}: {exc}"[:500])


def check_lines(text: str, *, what: str = "line", first: int = 1) -> None:
    limit = max_line_chars()
    if len(text) <= limit:
        return
    lines = text.split("\n")
    if max(map(len, lines)) <= limit:  # in C: the common case costs no Python loop
        return
    for number, line in enumerate(lines, start=first):
        if len(line) > limit:
            raise ParseError(f"{what} {number:,} is {len(line):,} characters; the limit is {limit:,}")


def check_field(value: str, *, name: str) -> str:
    limit = FIELD_LIMITS[name]
    if len(value) > limit:
        raise ParseError(f"{name} is {len(value):,} characters; the limit is {limit:,}")
    return value


def check_storable(text: str, *, what: str) -> None:
    """PostgreSQL text holds no NUL and no unpaired surrogate (JSON's "\\u0000", "\\ud800")."""
    if "\x00" in text:
        raise ParseError(f"{what} holds a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ParseError(f"{what} holds an unpaired surrogate at character {exc.start:,}") from exc


def checked(document: ParsedDocument) -> ParsedDocument:
    """The caps every backend's output obeys, whatever the format."""
    check_field(document.title, name="title")
    check_field(document.slug, name="slug")
    check_field(document.audience or "", name="audience")
    check_field(document.version, name="version")
    check_field(document.supersedes or "", name="supersedes")
    for value, what in ((document.title, "title"), (document.slug, "slug"), (document.audience or "", "audience"),
                        (document.version, "version"), (document.supersedes or "", "supersedes")):
        check_storable(value, what=what)
    for section in document.sections:
        tick()
        for part in section.heading_path:
            check_field(part, name="heading")
            check_storable(part, what="a heading")
        label = " > ".join(section.heading_path)[:80] or "(untitled)"
        check_storable(section.text, what=f"section {label!r}")
        check_lines(section.text, what=f"section {label!r}: line")
    return document


# --- YAML without aliases --------------------------------------------------------------------

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def load_yaml(text: str, *, what: str, max_chars: int) -> object:
    """Safe YAML with no anchors, no aliases, bounded size and nesting.

    Aliases are how a 257-byte file becomes gigabytes once constructed; the event stream is
    read first (linear, nothing built) and any anchor refuses the whole text."""
    if len(text) > max_chars:
        raise ParseError(f"{what} is {len(text):,} characters; the limit is {max_chars:,}")
    try:
        depth = 0
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):
                raise ParseError(f"{what} uses a YAML alias (*{event.anchor}); anchors and aliases are refused")
            anchor = getattr(event, "anchor", None)
            if anchor:
                raise ParseError(f"{what} defines a YAML anchor (&{anchor}); anchors and aliases are refused")
            if isinstance(event, _OPEN):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise ParseError(f"{what} nests deeper than {MAX_YAML_DEPTH} levels")
            elif isinstance(event, _CLOSE):
                depth -= 1
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader, aliases already refused
    except yaml.YAMLError as exc:
        raise ParseError(f"{what} is not valid YAML: {exc}") from exc
    except ParseError:
        raise
    except (ValueError, TypeError, OverflowError) as exc:  # int("9" * 5000), 2025-13-45
        raise ParseError(f"{what} has a value YAML cannot read: {exc}") from exc


SCALARS = (str, int, float, bool)


def scalar(value: object, *, what: str) -> object:
    """A metadata value must be one value: a list or mapping is refused, never str()-ed."""
    if value is None or isinstance(value, (*SCALARS, dt.date)):
        return value
    kind = "a list" if isinstance(value, (list, tuple, set)) else "a mapping" if isinstance(value, dict) else type(
        value).__name__
    raise ParseError(f"{what} must be a single value, not {kind}")
