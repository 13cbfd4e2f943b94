"""Driving the chat page through Django's test client: ask, then read the event stream."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from asgiref.sync import async_to_sync
from django.test import Client

STREAM_URL = re.compile(r'sse-connect="([^"]+)"')


def ask(client: Client, slug: str, question: str, *, history: Sequence[dict[str, str]] = (),
        conversation_id: str = "conv-test-1", addr: str = "198.51.100.7", **extra: Any) -> Any:
    return client.post(f"/t/{slug}/ask", {"question": question, "history": json.dumps(list(history)),
                                          "conversation_id": conversation_id},
                       HTTP_HX_REQUEST="true", REMOTE_ADDR=addr, **extra)


def stream_url(fragment: bytes) -> str:
    match = STREAM_URL.search(fragment.decode())
    assert match, fragment.decode()[:500]
    return match.group(1).replace("&amp;", "&")


def read_events(response: Any) -> list[tuple[str, str]]:
    """The events of a text/event-stream response, in order, as (name, data)."""
    assert response["Content-Type"].startswith("text/event-stream")

    async def collect() -> list[bytes]:
        return [chunk async for chunk in response.streaming_content]

    # Paced (asynchronous) under ASGI, a plain generator under WSGI and this test client (answering/sse.py).
    chunks = async_to_sync(collect)() if response.is_async else list(response.streaming_content)
    body = b"".join(chunks).decode()
    events = []
    for block in body.split("\n\n"):
        if not block.strip():
            continue
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                data.append(line[len("data: "):])
        events.append((name, "\n".join(data)))
    return events


def ask_and_stream(client: Client, slug: str, question: str, **kwargs: Any) -> list[tuple[str, str]]:
    response = ask(client, slug, question, **kwargs)
    assert response.status_code == 200, response.content[:500]
    return read_events(client.get(stream_url(response.content)))


def done_of(events: list[tuple[str, str]]) -> str:
    assert events and events[-1][0] == "done", [name for name, _ in events]
    return events[-1][1]
