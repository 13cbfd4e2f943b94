"""Markdown: YAML front matter, then the heading tree gives each section its path."""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

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

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            try:
                meta = yaml.safe_load("\n".join(lines[1:index])) or {}
            except yaml.YAMLError as exc:
                raise ParseError(f"front matter is not valid YAML: {exc}") from exc
            if not isinstance(meta, dict):
                raise ParseError("front matter must be a mapping")
            return meta, "\n".join(lines[index + 1 :])
    raise ParseError("front matter opened with --- but never closed")


def sections_from_markdown(body: str, *, title: str) -> tuple[str, list[Section]]:
    """Split on headings outside code fences. The first h1 names the document if no title was given."""
    stack: list[tuple[int, str]] = []
    sections: list[Section] = []
    buffer: list[str] = []
    in_fence = False
    doc_title = title

    def path() -> tuple[str, ...]:
        return (doc_title, *[h for _, h in stack])

    def flush() -> None:
        text = "\n".join(buffer).strip()
        if text:
            sections.append(Section(heading_path=path(), text=text))
        buffer.clear()

    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            buffer.append(line)
            continue
        flush()
        level, heading = len(match.group(1)), match.group(2).strip()
        if level == 1:
            if not doc_title:
                doc_title = heading
            stack = [] if heading == doc_title else [(1, heading)]
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
    flush()
    return doc_title, sections


def parse_markdown_text(text: str, *, file: SourceFile, source_type: str, extra: str = "") -> ParsedDocument:
    meta, body = split_front_matter(text)
    title = str(meta.get("title") or "").strip()
    title, sections = sections_from_markdown(body, title=title)
    if not title:
        title = file.slug.rsplit("/", 1)[-1].replace("-", " ").replace("_", " ").title()
        sections = [Section((title, *s.heading_path[1:]), s.text, s.page) for s in sections]
    if not sections:
        raise ParseError("no text after parsing (empty document)")
    audience = meta.get("audience")
    return ParsedDocument(
        slug=file.slug,
        title=title,
        source_type=source_type,
        sections=sections,
        source_path=str(file.path),
        fingerprint=fingerprint(text, extra),
        version=str(meta.get("version") or ""),
        effective_date=parse_date(meta.get("effective_date"), what="effective_date"),
        audience=str(audience) if audience else None,
        supersedes=str(meta["supersedes"]) if meta.get("supersedes") else None,
    )


def parse_files(files: list[SourceFile], *, source_type: str) -> Iterator[ParseResult]:
    for file in files:
        try:
            yield parse_markdown_text(file.read_text(), file=file, source_type=source_type)
        except (ParseError, OSError) as exc:
            yield ParseFailure(str(file.path), str(exc))
