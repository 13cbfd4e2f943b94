"""A document's outline: headings and named entities (definition-list terms) become sections.

Reference documentation names its entities in definition lists: a PostgreSQL parameter is a
`<dt id="GUC-WORK-MEM">work_mem (integer)</dt>`, a Sphinx function a `<dt id="os.path.join">`
signature, a Markdown glossary a `Term` line followed by `: definition`. The HTML and
Markdown parsers turn what they read into a flat list of `Item`s in reading order; `sections`
builds the sections from it, a term joining the heading path (and naming its anchor) when what
it defines is substantial (docs/decisions/0041-definition-list-entities.md).

Both passes over the items are linear: the first sizes each term's definition with a stack,
the second builds the sections.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from django.conf import settings

from corpus.parsers import Section, budget

# A term whose definition holds fewer characters than this stays a line of its parent's text:
# a glossary of one-liners or a <dl> used for layout must not become hundreds of tiny chunks.
# Measured on the two developer corpora (decision 0041): half of PostgreSQL's <dd>s are under
# 141 characters, half of Django's under 91.
MIN_ENTITY_CHARS = 200
# Deeper terms stay text: a Sphinx class > method > argument list is as deep as reference goes.
MAX_ENTITY_DEPTH = 4
# A term longer than this (a Sphinx signature with every default) is cut in the heading path;
# its whole text opens the entity's body, so nothing is lost to the cut.
MAX_TERM_CHARS = 100
# Joins the fingerprint of every document parsed with entities on: turning them on, or a
# change here, must re-chunk what was stored before.
OUTLINE_VERSION = "entities-1"

HEADING, TEXT, TERM = 1, 0, -1


def entities_enabled() -> bool:
    """Off by default: on the developer sets the entities did not win (decision 0041). Off,
    the parsers read definition lists as they always did, byte for byte."""
    return settings.CORPUS_DEFINITION_ENTITIES


def fingerprint_parts() -> tuple[str, ...]:
    """What the outline adds to a document's fingerprint: nothing while entities are off, so
    what was stored before stays unchanged."""
    return (OUTLINE_VERSION,) if entities_enabled() else ()


class Item(NamedTuple):
    """One piece of a document in reading order.

    kind: HEADING (level is the heading's), TEXT (a line), or TERM (a definition-list term).
    depth: how many definitions enclose it; the text of a term at depth d is at depth d + 1."""

    kind: int
    text: str
    level: int = 0
    depth: int = 0
    anchor: str = ""


@dataclass(frozen=True)
class EntitySection(Section):
    """A section inside a named entity; `anchor` is the term's id on its page ("" for none)."""

    anchor: str = ""


def add_term(items: list[Item], *, text: str, depth: int, anchor: str) -> None:
    """Append a term; consecutive terms of one definition (`<dt>-a<dt>--all<dd>`) are one."""
    if items and items[-1].kind == TERM and items[-1].depth == depth:
        last = items[-1]
        items[-1] = last._replace(text=f"{last.text}, {text}", anchor=last.anchor or anchor)
        return
    items.append(Item(TERM, text, depth=depth, anchor=anchor))


def promoted_terms(items: Sequence[Item]) -> set[int]:
    """Indexes of the terms whose definitions hold at least MIN_ENTITY_CHARS characters."""
    promoted: set[int] = set()
    open_terms: list[tuple[int, int, int]] = []  # (item index, depth, characters seen at its start)
    seen = 0

    def close_to(depth: int) -> None:
        while open_terms and open_terms[-1][1] >= depth:
            index, _, start = open_terms.pop()
            if seen - start >= MIN_ENTITY_CHARS:
                promoted.add(index)

    for index, item in enumerate(items):
        if not index & 1023:
            budget.tick()
        if item.kind == HEADING:
            close_to(0)
        elif item.kind == TERM:
            close_to(item.depth)
            if item.depth < MAX_ENTITY_DEPTH:
                open_terms.append((index, item.depth, seen))
        else:
            close_to(item.depth)
            seen += len(item.text)
    close_to(0)
    return promoted


def short_term(text: str) -> str:
    if len(text) <= MAX_TERM_CHARS:
        return text
    cut = text.rfind(" ", 0, MAX_TERM_CHARS)
    return text[: cut if cut > MAX_TERM_CHARS // 2 else MAX_TERM_CHARS].rstrip(" ,(") + " …"


class _Builder:
    def __init__(self, title: str, *, strip: bool) -> None:
        self.title = title
        self.strip = strip
        self.headings: list[tuple[int, str]] = []
        self.entities: list[tuple[int, str, str]] = []  # (depth, term as the path shows it, anchor)
        self.buffer: list[str] = []
        self.sections: list[Section] = []

    def flush(self) -> None:
        text = "\n".join(self.buffer)
        self.buffer.clear()
        if not text.strip():
            return
        text = text.strip() if self.strip else text
        path = (self.title, *[h for _, h in self.headings if h != self.title], *[t for _, t, _ in self.entities])
        anchor = next((a for _, _, a in reversed(self.entities) if a), "")
        self.sections.append(EntitySection(path, text, anchor=anchor) if self.entities else Section(path, text))

    def leave_to(self, depth: int) -> None:
        """Close the entities at `depth` or deeper: what follows is no longer inside them."""
        if self.entities and self.entities[-1][0] >= depth:
            self.flush()
            while self.entities and self.entities[-1][0] >= depth:
                self.entities.pop()

    def heading(self, level: int, text: str) -> None:
        self.flush()
        self.entities.clear()
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, text))

    def term(self, item: Item, promoted: bool) -> None:
        self.leave_to(item.depth)
        if not promoted:
            self.buffer.append(item.text)
            return
        self.flush()
        shown = short_term(item.text)
        self.entities.append((item.depth, shown, item.anchor))
        if shown != item.text:
            self.buffer.append(item.text)


def sections(items: Iterable[Item], *, title: str, strip: bool) -> list[Section]:
    """The sections of a document: a heading or a promoted term starts one, leaving an entity ends one.
    `strip`: trim each section's text (Markdown's blank lines), or keep it as the lines were read."""
    items = list(items)
    promoted = promoted_terms(items)
    builder = _Builder(title, strip=strip)
    for index, item in enumerate(items):
        if not index & 1023:
            budget.tick()
        if item.kind == HEADING:
            builder.heading(item.level, item.text)
        elif item.kind == TERM:
            builder.term(item, index in promoted)
        else:
            builder.leave_to(item.depth)
            builder.buffer.append(item.text)
    builder.flush()
    return builder.sections
