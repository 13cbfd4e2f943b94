"""A real HTTP server on loopback that speaks the OpenAI and Gemini streaming wire formats.

Each test scripts the next responses (a queue per dialect): a normal streamed answer, 429
with Retry-After, 503, a hang past the client's timeout, malformed JSON, a stream cut
midway, or one that reports its usage and then breaks off ("unfinished"). Requests are
recorded so tests can read what was sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    openai: deque[tuple[str, Any]] = field(default_factory=deque)
    gemini: deque[tuple[str, Any]] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)


def _openai_chunks(text: str) -> list[str]:
    pieces = [text[i:i + 7] for i in range(0, len(text), 7)]
    events = [json.dumps({"choices": [{"delta": {"content": p}, "index": 0}]}) for p in pieces]
    events.append(json.dumps({"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30}}))
    return events


def _gemini_chunks(text: str) -> list[str]:
    pieces = [text[i:i + 9] for i in range(0, len(text), 9)]
    events = [json.dumps({"candidates": [{"content": {"parts": [{"text": p}]}}]}) for p in pieces]
    events.append(json.dumps({"candidates": [{"content": {"parts": []}, "finishReason": "STOP"}],
                              "usageMetadata": {"promptTokenCount": 110, "candidatesTokenCount": 25}}))
    return events


def make_handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            return None

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            dialect = "gemini" if ":streamGenerateContent" in self.path else "openai"
            script.requests.append({"dialect": dialect, "path": self.path, "headers": dict(self.headers),
                                    "body": body})
            queue = getattr(script, dialect)
            entry: tuple[str, Any] = queue.popleft() if queue else ("ok", "{}")
            kind, arg = entry
            if kind == "status":
                status, retry_after, text = arg
                payload = text.encode()
                self.send_response(status)
                if retry_after is not None:
                    self.send_header("Retry-After", str(retry_after))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            if kind == "hang":
                seconds, arg = arg
                time.sleep(seconds)
            # "unfinished": every event, usage included, but no [DONE] / finishReason (billed, then broken).
            events = _gemini_chunks(arg) if dialect == "gemini" and kind in ("ok", "cut", "hang", "unfinished") else (
                _openai_chunks(arg) if kind in ("ok", "cut", "hang", "unfinished") else [])
            if kind == "unfinished" and dialect == "gemini":
                events[-1] = events[-1].replace('"finishReason": "STOP"', '"finishReason": null')
            if kind == "malformed":
                events = ['{"choices": [{"delta": {"content": "Hel', "not json at all"]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            if kind == "cut":
                events = events[: max(1, len(events) // 2)]
            for event in events:
                self.wfile.write(f"data: {event}\n\n".encode())
                self.wfile.flush()
            if kind in ("ok", "hang") and dialect == "openai":
                self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


@contextmanager
def fake_provider() -> Iterator[tuple[str, Script]]:
    script = Script()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(script))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", script
    finally:
        server.shutdown()
        server.server_close()
