"""Server-sent events, for the API (JSON payloads) and the chat page (HTML fragments).

Under ASGI Django drains a synchronous iterator completely before sending it, which would
turn a stream into one late response; so the response gets an async generator that advances
the synchronous pipeline one event at a time on the request's thread (thread-sensitive, so
the database connection and its row-level security settings stay on one thread).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.http import StreamingHttpResponse

_END = object()


def sse(data: Any, *, event: str | None = None) -> bytes:
    """One event; JSON on a single `data:` line (json.dumps never emits a raw newline)."""
    body = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {body}\n\n".encode()


async def paced(events: Iterator[bytes]) -> AsyncIterator[bytes]:
    step = sync_to_async(next, thread_sensitive=True)
    try:
        while True:
            chunk = await step(events, _END)
            if chunk is _END:
                return
            yield chunk  # type: ignore[misc]
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            await sync_to_async(close, thread_sensitive=True)()


def sse_response(events: Iterator[bytes], *, asynchronous: bool) -> StreamingHttpResponse:
    """`asynchronous` under ASGI; the WSGI server and the test client iterate the plain generator."""
    response = StreamingHttpResponse(paced(events) if asynchronous else events, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the events back
    return response


def is_asgi(request: Any) -> bool:
    from django.core.handlers.asgi import ASGIRequest

    return isinstance(request, ASGIRequest)
