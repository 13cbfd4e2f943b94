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
_AFTER_TERM = (":", "")  # what the line after a term opens with: its definition, or a blank line


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


def _definition(line: str) -> str | None:
    """The text of a definition line (`: text`, the Markdown Extra and Pandoc syntax), else None."""
    return line[2:].strip() if line[:1] == ":" and line[1:2] in (" ", "\t") else None


def _opens_definition(lines: list[str], number: int) -> bool:
    """Whether the line at `number` is a term: a definition follows it, at most one blank line on."""
    following = lines[number + 1 : number + 3]
    if following and not following[0].strip():
        following = following[1:]
    return bool(following) and _definition(following[0]) is not None


def outline_items(body: str, *, entities: bool) -> list[outline.Item]:
    """Headings outside code fences, definition-list terms and their definitions, and lines
    (consecutive lines of text are one item)."""
    lines = body.split("\n")
    last = len(lines) - 1
    items: list[outline.Item] = []
    pending: list[str] = []
    in_fence = False
    depth = 0  # 1 inside a definition

    def flush() -> None:
        if pending:
            items.append(outline.Item(outline.TEXT, "\n".join(pending), depth=depth))
            pending.clear()

    for number, line in enumerate(lines):
        if not number & 1023:
            budget.tick()
        first = line[:1]
        # Most lines open with neither whitespace, a fence mark nor a hash: skip the work.
        if first in _FENCE_OPENERS or first.isspace():
            if line.lstrip().startswith(_FENCES):
                in_fence = not in_fence
        # Nor can most be a term: that needs a definition (or a blank line) on the next line.
        term = (entities and number < last and lines[number + 1][:1] in _AFTER_TERM and first and first != ":"
                and not first.isspace() and not in_fence and _opens_definition(lines, number))
        if in_fence or (not depth and first != "#" and not term):
            pending.append(line)
            continue
        found = heading(line) if first == "#" else None
        definition = _definition(line) if depth else None
        if found is not None:
            flush()
            depth = 0
            items.append(outline.Item(outline.HEADING, found[1], found[0]))
        elif definition is not None:
            pending.append(definition)
        elif term:
            flush()
            outline.add_term(items, text=line.strip(), depth=0, anchor="")
            depth = 1
        else:
            if depth and first and not first.isspace() and not lines[number - 1].strip():
                flush()
                depth = 0  # a paragraph back at the margin after a blank line ends the list
            pending.append(line)
    flush()
    return items


def sections_from_markdown(body: str, *, title: str) -> tuple[str, list[Section]]:
    """Split on headings and definition-list terms. The first h1 names the document if no title was given."""
    items = outline_items(body, entities=outline.entities_enabled())
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
        fingerprint=fingerprint(text, extra, MARKDOWN_OUTLINE, *outline.fingerprint_parts()),
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
