"""Changelog entries and resolved tickets: a JSON list or a CSV file of entries with their own ids.

Each entry becomes a document whose slug is its id, so golden sets address it as
`{source: changelog, id: CL-2025-03}`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from typing import Any

from corpus.parsers import (
    ParsedDocument,
    ParseError,
    ParseFailure,
    ParseResult,
    Section,
    SourceFile,
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


def load_entries(file: SourceFile) -> list[Mapping[str, Any]]:
    text = file.read_text()
    if file.path.suffix.lower() == ".csv":
        return list(csv.DictReader(io.StringIO(text)))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg} at line {exc.lineno}") from exc
    if isinstance(data, dict):
        data = data.get("entries")
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise ParseError("expected a list of entry objects (or {'entries': [...]})")
    return data


def entry_document(entry: Mapping[str, Any], *, file: SourceFile, source_type: str) -> ParsedDocument:
    entry_id = str(entry.get("id") or "").strip()
    if not entry_id:
        raise ParseError("entry without an id")
    if source_type == "ticket":
        title = str(entry.get("subject") or entry.get("title") or entry_id).strip()
        question = str(entry.get("question") or "").strip()
        resolution = str(entry.get("resolution") or "").strip()
        sections = [
            Section((title, "Question"), question) if question else None,
            Section((title, "Resolution"), resolution) if resolution else None,
        ]
        found = [s for s in sections if s is not None]
        date = entry.get("resolved_at") or entry.get("date")
    else:
        title = str(entry.get("title") or entry_id).strip()
        _, found = sections_from_markdown(str(entry.get("body") or ""), title=title)
        date = entry.get("date") or entry.get("effective_date")
    if not found:
        raise ParseError(f"entry {entry_id} has no text")
    audience = entry.get("audience")
    return ParsedDocument(
        slug=entry_id,
        title=title,
        source_type=source_type,
        sections=found,
        source_path=f"{file.path}#{entry_id}",
        fingerprint=fingerprint(json.dumps(entry, sort_keys=True, default=str)),
        version=str(entry.get("version") or ""),
        effective_date=parse_date(date, what=f"entry {entry_id} date"),
        audience=str(audience) if audience else None,
    )


def parse_files(files: list[SourceFile], *, source_type: str) -> Iterator[ParseResult]:
    for file in files:
        try:
            kind = infer_source_type(file, source_type)
            entries = load_entries(file)
        except (ParseError, OSError) as exc:
            yield ParseFailure(str(file.path), str(exc))
            continue
        seen: set[str] = set()
        for index, entry in enumerate(entries):
            try:
                document = entry_document(entry, file=file, source_type=kind)
                if document.slug in seen:
                    raise ParseError(f"duplicate entry id {document.slug}")
                seen.add(document.slug)
                yield document
            except ParseError as exc:
                yield ParseFailure(f"{file.path}#{index}", str(exc))
