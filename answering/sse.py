"""Server-sent events, for the API (JSON payloads) and the chat page (HTML fragments): one
encoder (`sse`) and one response (`EventStreamResponse`) for both.

Under ASGI Django drains a synchronous iterator completely before sending it, which would
turn a stream into one late response; so the response is asynchronous: paced() advances the
synchronous pipeline one event at a time on the request's thread (thread-sensitive, so the
database connection and its row-level security settings stay on one thread). Under WSGI
Django would drain that asynchronous iterator instead, so a WSGI server iterating the
response is handed the plain generator.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.http import StreamingHttpResponse


def _next_or_none(events: Iterator[bytes]) -> bytes | None:
    return next(events, None)  # an event is never None: None is the end


def sse(data: Any, *, event: str | None = None) -> bytes:
    """One event: a string as it is (an HTML fragment, `[DONE]`), anything else as JSON.

    Each line of the data gets its own `data:` line, which the client joins with "\n": a raw
    newline inside one `data:` line would end the field there and lose the rest."""
    body = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    head = f"event: {event}\n" if event else ""
    return (head + "".join(f"data: {line}\n" for line in lines) + "\n").encode()


async def paced(events: Iterator[bytes]) -> AsyncGenerator[bytes, None]:
    step = sync_to_async(_next_or_none, thread_sensitive=True)
    try:
        while True:
            chunk = await step(events)
            if chunk is None:
                return
            yield chunk
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            await sync_to_async(close, thread_sensitive=True)()


class EventStreamResponse(StreamingHttpResponse):
    """`text/event-stream`, streamed event by event under either server (see the module's docstring)."""

    # Django's own list (HttpResponseBase.__init__), private and so absent from django-stubs.
    _resource_closers: list[Callable[[], object]]

    def __init__(self, events: Iterator[bytes]) -> None:
        super().__init__(paced(events), content_type="text/event-stream")
        self._events = events
        close = getattr(events, "close", None)
        if close is not None:  # a WSGI server closes the response when the client goes away
            self._resource_closers.append(close)
        self["Cache-Control"] = "no-cache"
        self["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the events back

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._events)
