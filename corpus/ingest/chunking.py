"""Token-budgeted chunks of whole sentences, with the heading path prepended.

The budget is counted by the embedding model's own tokenizer and capped by its
`max_seq_length`: a longer chunk would be stored whole, embedded truncated, and quietly
retrieved worse. Sentences are packed greedily to a target below that limit by their
summed counts; a sentence longer than the budget is cut at token boundaries; then every
joined chunk is measured (per-piece counts need not add up once joined) and any chunk
still over the model's limit is split again. The target's headroom under the limit is what
absorbs the difference, and the final pass is the guarantee.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Protocol

from corpus.parsers import Section

HEADING_SEPARATOR = " > "
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9`])")


class TokenCounter(Protocol):
    @property
    def max_content_tokens(self) -> int: ...

    def count_tokens(self, text: str) -> int: ...

    def count_batch(self, texts: Sequence[str]) -> list[int]: ...

    def token_offsets(self, text: str) -> list[tuple[int, int]]: ...


@dataclass(frozen=True)
class ChunkDraft:
    heading_path: str
    content: str  # heading path, blank line, body: what both retrieval legs index
    page: int | None
    token_count: int


def heading_text(path: Sequence[str]) -> str:
    return HEADING_SEPARATOR.join(part for part in path if part)


def split_units(text: str) -> list[tuple[str, str]]:
    """(separator before, unit) pairs: sentences within a line, lines kept as lines."""
    units: list[tuple[str, str]] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        pieces = _SENTENCE_END.split(line) if len(line) > 80 else [line]
        for index, piece in enumerate(pieces):
            if piece.strip():
                units.append(("\n" if index == 0 else " ", piece.rstrip()))
    return units


def _join(units: Sequence[tuple[str, str]]) -> str:
    return "".join(sep + unit for sep, unit in units).lstrip("\n ")


# Tokenising the whole rest for every cut made a 100,000-character line without a sentence end
# cost 33 s (quadratic); each cut now tokenises a window ending at a space, which tokenises
# exactly as the same prefix of the rest does, and doubles it only while it holds too few pieces.
_WINDOW_CHARS_PER_TOKEN = 16


def _window(rest: str, size: int) -> int:
    if size >= len(rest):
        return len(rest)
    space = rest.rfind(" ", 0, size)
    return space if space > size // 2 else size


def cut_to_budget(text: str, budget: int, counter: TokenCounter) -> list[str]:
    """Cut text into pieces of at most `budget` word pieces, preferring whitespace."""
    pieces: list[str] = []
    rest = text.strip()
    while rest:
        window = _window(rest, budget * _WINDOW_CHARS_PER_TOKEN)
        offsets = counter.token_offsets(rest[:window])
        while len(offsets) <= budget and window < len(rest):
            window = _window(rest, window * 2)
            offsets = counter.token_offsets(rest[:window])
        if len(offsets) <= budget:
            pieces.append(rest)
            break
        end = offsets[budget - 1][1]
        space = rest.rfind(" ", 0, end)
        if space > end // 2:
            end = space
        pieces.append(rest[:end].strip())
        rest = rest[end:].strip()
    return [p for p in pieces if p]


def chunk_sections(sections: Sequence[Section], *, counter: TokenCounter, target: int) -> list[ChunkDraft]:
    limit = counter.max_content_tokens
    target = min(target, limit)
    # One tokenizer batch per document for every heading prefix and sentence; per-call
    # overhead, not tokenising, is what costs here.
    headings = [heading_text(section.heading_path) for section in sections]
    prefixes = [f"{h}\n\n" if h else "" for h in headings]
    unit_lists = [split_units(section.text) for section in sections]
    flat = prefixes + [unit for units in unit_lists for _, unit in units]
    counts = iter(counter.count_batch(flat))
    prefix_counts = [next(counts) for _ in prefixes]
    drafts: list[ChunkDraft] = []
    for section, heading, prefix, prefix_tokens, units in zip(sections, headings, prefixes, prefix_counts, unit_lists):
        unit_counts = [next(counts) for _ in units]
        if prefix_tokens > target // 2:
            # A pathological heading path must not eat the body's budget: keep its tail.
            heading = cut_to_budget(heading, target // 2, counter)[-1]
            prefix = f"{heading}\n\n"
            prefix_tokens = counter.count_tokens(prefix)
        room = target - prefix_tokens
        draft = partial(_draft, heading, page=section.page)
        current: list[tuple[str, str]] = []
        used = 0
        for (sep, unit), unit_tokens in zip(units, unit_counts):
            if unit_tokens > room:
                if current:
                    drafts.append(draft(prefix + _join(current)))
                current, used = [], 0
                drafts.extend(draft(prefix + piece) for piece in cut_to_budget(unit, room, counter))
                continue
            # Packing sums per-sentence counts (+1 for the joining space); the joined text of
            # every chunk is measured in enforce_limit, which has the last word.
            if current and used + unit_tokens + 1 > room:
                drafts.append(draft(prefix + _join(current)))
                current, used = [], 0
            current.append((sep, unit))
            used += unit_tokens + (1 if used else 0)
        if current:
            drafts.append(draft(prefix + _join(current)))
    return enforce_limit(drafts, counter=counter, limit=limit)


def _draft(heading: str, content: str, *, page: int | None) -> ChunkDraft:
    # token_count is filled by the final pass, which counts every chunk in one batch.
    return ChunkDraft(heading_path=heading, content=content, page=page, token_count=-1)


def enforce_limit(drafts: Sequence[ChunkDraft], *, counter: TokenCounter, limit: int) -> list[ChunkDraft]:
    """The guarantee: no chunk leaves here over the model's limit, whatever the packing did."""
    result: list[ChunkDraft] = []
    counts = counter.count_batch([d.content for d in drafts])
    for draft, count in zip(drafts, counts):
        if count <= limit:
            result.append(replace(draft, token_count=count))
            continue
        prefix = f"{draft.heading_path}\n\n" if draft.heading_path else ""
        body = draft.content[len(prefix) :]
        room = limit - counter.count_tokens(prefix)
        for piece in cut_to_budget(body, room, counter):
            content = prefix + piece
            count = counter.count_tokens(content)
            while count > limit:  # joins of a cut can still tokenise longer
                piece = piece[: int(len(piece) * 0.9)]
                content = prefix + piece
                count = counter.count_tokens(content)
            result.append(replace(draft, content=content, token_count=count))
    return result

