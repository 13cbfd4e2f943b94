"""Parsers turn files into documents made of sections (heading path + text [+ page]).

One module per format behind a registry of dotted paths, so a deployment can add a format by
configuration (`CORPUS_PARSERS`). Every backend exposes
`parse_files(files: list[SourceFile], *, source_type: str) -> Iterator[ParsedDocument | ParseFailure]`;
it receives all files of its format at once because some formats (HTML doc sites) learn
their boilerplate from the whole set.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

from django.conf import settings

PARSER_VERSION = "1"  # bump to re-ingest everything after a parser change

DEFAULT_PARSERS: dict[str, str] = {
    ".md": "corpus.parsers.markdown",
    ".markdown": "corpus.parsers.markdown",
    ".html": "corpus.parsers.html",
    ".htm": "corpus.parsers.html",
    ".pdf": "corpus.parsers.pdf",
    ".txt": "corpus.parsers.text",
    ".text": "corpus.parsers.text",
    ".json": "corpus.parsers.entries",
    ".csv": "corpus.parsers.entries",
}


@dataclass(frozen=True)
class SourceFile:
    path: Path
    slug: str

    def read_bytes(self) -> bytes:
        from corpus.parsers.budget import current_limits  # the budget module imports this one

        limit = current_limits().max_file_bytes
        size = self.path.stat().st_size
        if size > limit:
            raise ParseError(f"file is {size:,} bytes, over the {limit:,}-byte limit")
        return self.path.read_bytes()

    def read_text(self) -> str:
        raw = self.read_bytes()
        nul = raw.find(b"\x00")  # anywhere: PostgreSQL text cannot hold one, and it fails the whole write
        if nul >= 0:
            raise ParseError(f"binary file (NUL byte at byte {nul:,}), not text")
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ParseError(f"not UTF-8 (byte {exc.start})") from exc


@dataclass(frozen=True)
class Section:
    heading_path: tuple[str, ...]
    text: str
    page: int | None = None


@dataclass
class ParsedDocument:
    slug: str
    title: str
    source_type: str
    sections: list[Section]
    source_path: str
    fingerprint: str  # hash of what the parser read: unchanged fingerprint means skip
    version: str = ""
    effective_date: dt.date | None = None
    audience: str | None = None
    supersedes: str | None = None
    meta: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ParseFailure:
    source_path: str
    reason: str
    skipped: bool = False  # nothing to ingest, but nothing wrong with the input either


class ParseError(ValueError):
    pass


ParseResult = ParsedDocument | ParseFailure
Backend = Callable[..., Iterator[ParseResult]]


def fingerprint(*parts: str | bytes) -> str:
    digest = hashlib.sha256(PARSER_VERSION.encode())
    for part in parts:
        digest.update(b"\x1f")
        digest.update(part if isinstance(part, bytes) else part.encode())
    return digest.hexdigest()


def parse_date(value: object, *, what: str) -> dt.date | None:
    if value in (None, ""):
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value).strip()[:10])
    except ValueError as exc:
        raise ParseError(f"{what} {value!r} is not a YYYY-MM-DD date") from exc


def registry() -> dict[str, str]:
    return {**DEFAULT_PARSERS, **getattr(settings, "CORPUS_PARSERS", {})}


def backend_for(suffix: str) -> Backend | None:
    dotted = registry().get(suffix.lower())
    if dotted is None:
        return None
    return import_module(dotted).parse_files
