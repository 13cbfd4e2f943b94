"""A document's outline: its headings make the sections.

The HTML and Markdown parsers turn what they read into a flat list of `Item`s in reading order;
`sections` builds the sections from it, each under the path of the headings above it. A
definition-list term is a line of its section's text, not a section of its own
(docs/decisions/0041, 0080).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from corpus.parsers import Section, budget

HEADING, TEXT = 1, 0


class Item(NamedTuple):
    """One piece of a document in reading order: a HEADING (level is the heading's) or TEXT (a line)."""

    kind: int
    text: str
    level: int = 0


class _Builder:
    def __init__(self, title: str, *, strip: bool) -> None:
        self.title = title
        self.strip = strip
        self.headings: list[tuple[int, str]] = []
        self.buffer: list[str] = []
        self.sections: list[Section] = []

    def flush(self) -> None:
        text = "\n".join(self.buffer)
        self.buffer.clear()
        if not text.strip():
            return
        text = text.strip() if self.strip else text
        path = (self.title, *[h for _, h in self.headings if h != self.title])
        self.sections.append(Section(path, text))

    def heading(self, level: int, text: str) -> None:
        self.flush()
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, text))


def sections(items: Iterable[Item], *, title: str, strip: bool) -> list[Section]:
    """The sections of a document: a heading starts one. `strip`: trim each section's text
    (Markdown's blank lines), or keep it as the lines were read."""
    builder = _Builder(title, strip=strip)
    for index, item in enumerate(items):
        if not index & 1023:
            budget.tick()
        if item.kind == HEADING:
            builder.heading(item.level, item.text)
        else:
            builder.buffer.append(item.text)
    builder.flush()
    return builder.sections
