"""Changelog entries and resolved tickets: a JSON list or a CSV file of entries with their own ids.

Each entry becomes a document whose slug is its id, so golden sets address it as
`{source: changelog, id: CL-2025-03}`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any

from corpus.parsers import (
    ParsedDocument,
    ParseError,
    ParseFailure,
    ParseResult,
    Section,
    SourceFile,
    budget,
    fingerprint,
    parse_date,
)
from corpus.parsers.markdown import sections_from_markdown


def infer_source_type(file: SourceFile, given: str) -> str:
    if given in ("changelog", "ticket"):
        return given
    name = file.path.name.lower()
    if name.startswith("changelog"):
        return "changelog"
    if name.startswith("ticket"):
        return "ticket"
    raise ParseError("a JSON or CSV file holds entries: pass --source-type changelog or ticket")


def _csv_rows(text: str) -> list[Mapping[str, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    rows: list[Mapping[str, Any]] = []
    try:
        for row in reader:
            budget.tick()
            if None in row:  # DictReader files surplus cells under the key None
                raise ParseError(f"CSV line {reader.line_num:,} has more cells than the header")
            # A row of empty cells (a spreadsheet's trailing blank lines) is no entry, not an error.
            if any(value and value.strip() for value in row.values()):
                rows.append(row)
    except csv.Error as exc:  # e.g. a cell over csv's field size limit
        raise ParseError(f"CSV line {reader.line_num:,}: {exc}") from exc
    return rows


def load_entries(file: SourceFile) -> list[Mapping[str, Any]]:
    text = file.read_text()
    if file.path.suffix.lower() == ".csv":
        return _csv_rows(text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg} at line {exc.lineno}") from exc
    except RecursionError as exc:
        raise ParseError("invalid JSON: nested too deeply") from exc
    except ValueError as exc:  # a number of more than 4,300 digits
        raise ParseError(f"invalid JSON: {exc}") from exc
    if isinstance(data, dict):
        data = data.get("entries")
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise ParseError("expected a list of entry objects (or {'entries': [...]})")
    return data


def _text(entry: Mapping[str, Any], *keys: str, label: str) -> str:
    """The first present field of `keys` as text; a list or object is refused, never str()-ed."""
    for key in keys:
        value = budget.scalar(entry.get(key), what=f"{label} field {key!r}")
        if value:
            return str(value).strip()
    return ""


def entry_document(entry: Mapping[str, Any], *, file: SourceFile, source_type: str) -> ParsedDocument:
    entry_id = budget.check_field(_text(entry, "id", label="entry"), name="entry id")
    if not entry_id:
        raise ParseError("entry without an id")
    label = f"entry {entry_id[:80]}"
    if source_type == "ticket":
        title = _text(entry, "subject", "title", label=label) or entry_id
        question = _text(entry, "question", label=label)
        resolution = _text(entry, "resolution", label=label)
        sections = [
            Section((title, "Question"), question) if question else None,
            Section((title, "Resolution"), resolution) if resolution else None,
        ]
        found = [s for s in sections if s is not None]
        date: object = _text(entry, "resolved_at", "date", label=label)
    else:
        title = _text(entry, "title", label=label) or entry_id
        body = budget.scalar(entry.get("body"), what=f"{label} field 'body'")
        _, found = sections_from_markdown(str(body or ""), title=title)
        date = _text(entry, "date", "effective_date", label=label)
    if not found:
        raise ParseError(f"entry {entry_id} has no text")
    audience = _text(entry, "audience", label=label)
    return ParsedDocument(
        slug=entry_id,
        title=title,
        source_type=source_type,
        sections=found,
        source_path=f"{file.path}#{entry_id}",
        fingerprint=fingerprint(json.dumps(entry, sort_keys=True, default=str)),
        version=_text(entry, "version", label=label),
        effective_date=parse_date(date, what=f"entry {entry_id} date"),
        audience=audience or None,
    )


def parse_entries(file: SourceFile, source_type: str) -> list[ParseResult]:
    kind = infer_source_type(file, source_type)
    results: list[ParseResult] = []
    seen: set[str] = set()
    for index, entry in enumerate(load_entries(file)):
        budget.tick()
        try:
            document = budget.checked(entry_document(entry, file=file, source_type=kind))
            if document.slug in seen:
                raise ParseError(f"duplicate entry id {document.slug}")
            seen.add(document.slug)
            results.append(document)
        except budget.BudgetExceeded:
            raise  # the file's time is up: it fails whole, not entry by entry
        except ParseError as exc:
            results.append(ParseFailure(f"{file.path}#{index}", str(exc)))
    return results or [ParseFailure(str(file.path), "no entries in the file", skipped=True)]


def parse_files(files: list[SourceFile], *, source_type: str) -> Iterator[ParseResult]:
    for file in files:
        outcome = budget.guarded(str(file.path), partial(parse_entries, file, source_type))
        yield from (outcome if isinstance(outcome, list) else [outcome])
