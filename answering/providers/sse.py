"""Server-sent events, parsed by our own code (the framing is four rules; a library hides them).

Events are separated by a blank line; `data:` lines of one event are joined with newlines;
lines starting with `:` are comments (keep-alives); other fields (event, id, retry) are kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    data: str
    event: str = "message"


def iter_events(lines: Iterable[str]) -> Iterator[Event]:
    data: list[str] = []
    event = "message"
    for raw in lines:
        line = raw.rstrip("\r")
        if line == "":
            if data:
                yield Event(data="\n".join(data), event=event)
            data, event = [], "message"
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value
    if data:  # a stream that ends without the final blank line
        yield Event(data="\n".join(data), event=event)
