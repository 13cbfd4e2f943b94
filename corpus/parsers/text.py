"""Plain text: one section per document, titled by its first line when that looks like a title."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from corpus.parsers import ParsedDocument, ParseError, ParseResult, Section, SourceFile, budget, fingerprint


def parse_text(file: SourceFile, source_type: str) -> ParsedDocument:
    raw = file.read_text()
    budget.check_lines(raw)
    text = raw.strip()
    if not text:
        raise ParseError("empty file")
    first, _, rest = text.partition("\n")
    if len(first) <= 120 and rest.strip():
        title, body = first.strip(), rest.strip()
    else:
        title, body = file.slug.rsplit("/", 1)[-1].replace("-", " ").title(), text
    return budget.checked(ParsedDocument(
        slug=file.slug,
        title=title,
        source_type=source_type,
        sections=[Section(heading_path=(title,), text=body)],
        source_path=str(file.path),
        fingerprint=fingerprint(text),
    ))


def parse_files(files: list[SourceFile], *, source_type: str) -> Iterator[ParseResult]:
    for file in files:
        yield budget.guarded(str(file.path), partial(parse_text, file, source_type))
