"""Markdown: YAML front matter, then the heading tree gives each section its path."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import partial

from corpus.parsers import (
    ParsedDocument,
    ParseError,
    ParseResult,
    Section,
    SourceFile,
    fingerprint,
    parse_date,
)
from corpus.parsers import budget, outline

# The keys read from front matter: each must be one scalar value.
METADATA_KEYS = ("title", "audience", "supersedes", "version", "effective_date")
_FENCES = ("```", "~~~")
_FENCE_OPENERS = ("`", "~")
# Text before the first h1 is under the document's title (it had an empty heading path), and an
# h2 that repeats the title is not shown twice: what is stored re-chunks once.
MARKDOWN_OUTLINE = "outline-1"


def heading(line: str) -> tuple[int, str] | None:
    """An ATX heading as (level, text), in linear time.

    It returns what `^(#{1,6})\\s+(.+?)\\s*#*\\s*$` matched, which took cubic time on a line
    of spaces (10 s for 2,000): the level's hashes, whitespace, then the text up to a trailing
    run of whitespace, hashes and whitespace (at least one character is kept)."""
    level = len(line) - len(line.lstrip("#"))
    if not 1 <= level <= 6 or len(line) == level or not line[level].isspace():
        return None
    rest = line[level:]
    text = rest.lstrip()
    if not text:
        # `\s+(.+?)` with nothing but whitespace left: the text is one whitespace character.
        return (level, "") if len(rest) >= 2 else None
    keep = len(text.rstrip().rstrip("#").rstrip())
    return level, text[: max(keep, 1)].strip()


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    if not text.startswith("---"):
        return {}, text
    limit = budget.MAX_FRONT_MATTER_CHARS
    start = text.find("\n") + 1 if "\n" in text else len(text)
    position = start
    while position < len(text) and position - start <= limit:
        end = text.find("\n", position)
        stop = len(text) if end < 0 else end
        if text[position:stop].strip() in ("---", "..."):
            meta = budget.load_yaml(text[start:position], what="front matter", max_chars=limit) or {}
            if not isinstance(meta, dict):
                raise ParseError("front matter must be a mapping")
            for key in METADATA_KEYS:
                budget.scalar(meta.get(key), what=f"front matter {key!r}")
            return meta, "" if end < 0 else text[end + 1 :]
        position = stop + 1
    if position - start > limit:
        raise ParseError(f"front matter runs past {limit:,} characters without its closing ---; the limit is {limit:,}")
    raise ParseError("front matter opened with --- but never closed")


def outline_items(body: str) -> list[outline.Item]:
    """Headings outside code fences, and lines (consecutive lines of text are one item)."""
    items: list[outline.Item] = []
    pending: list[str] = []
    in_fence = False

    def flush() -> None:
        if pending:
            items.append(outline.Item(outline.TEXT, "\n".join(pending)))
            pending.clear()

    for number, line in enumerate(body.split("\n")):
        if not number & 1023:
            budget.tick()
        first = line[:1]
        # Most lines open with neither whitespace, a fence mark nor a hash: skip the work.
        if first in _FENCE_OPENERS or first.isspace():
            if line.lstrip().startswith(_FENCES):
                in_fence = not in_fence
        found = heading(line) if first == "#" and not in_fence else None
        if found is not None:
            flush()
            items.append(outline.Item(outline.HEADING, found[1], found[0]))
        else:
            pending.append(line)
    flush()
    return items


def sections_from_markdown(body: str, *, title: str) -> tuple[str, list[Section]]:
    """Split on headings. The first h1 names the document if no title was given."""
    items = outline_items(body)
    if not title:
        title = next((item.text for item in items if item.kind == outline.HEADING and item.level == 1), "")
    return title, outline.sections(items, title=title, strip=True)


def parse_markdown_text(text: str, *, file: SourceFile, source_type: str, extra: str = "") -> ParsedDocument:
    budget.check_lines(text)
    meta, body = split_front_matter(text)
    title = str(meta.get("title") or "").strip()
    title, sections = sections_from_markdown(body, title=title)
    if not title:
        title = file.slug.rsplit("/", 1)[-1].replace("-", " ").replace("_", " ").title()
        sections = [replace(s, heading_path=(title, *s.heading_path[1:])) for s in sections]
    if not sections:
        raise ParseError("no text after parsing (empty document)")
    audience = meta.get("audience")
    return ParsedDocument(
        slug=file.slug,
        title=title,
        source_type=source_type,
        sections=sections,
        source_path=str(file.path),
        fingerprint=fingerprint(text, extra, MARKDOWN_OUTLINE),
        version=str(meta.get("version") or ""),
        effective_date=parse_date(meta.get("effective_date"), what="effective_date"),
        audience=str(audience) if audience else None,
        supersedes=str(meta["supersedes"]) if meta.get("supersedes") else None,
    )


def parse_files(files: list[SourceFile], *, source_type: str) -> Iterator[ParseResult]:
    for file in files:
        yield budget.guarded(str(file.path), partial(_parse_file, file, source_type))


def _parse_file(file: SourceFile, source_type: str) -> ParsedDocument:
    return budget.checked(parse_markdown_text(file.read_text(), file=file, source_type=source_type))
