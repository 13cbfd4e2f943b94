"""A small website on loopback for the website sync tests: a real http.server in a thread that
answers conditional requests and counts what it was asked."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Page:
    body: str = ""
    status: int = 200
    location: str = ""
    content_type: str = "text/html; charset=utf-8"
    validator: str = "etag"  # etag | last-modified | none


@dataclass
class Site:
    pages: dict[str, Page] = field(default_factory=dict)
    requests: Counter[str] = field(default_factory=Counter)
    not_modified: Counter[str] = field(default_factory=Counter)
    user_agents: set[str] = field(default_factory=set)
    port: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def html(title: str, text: str, *, canonical: str = "", links: tuple[str, ...] = ()) -> str:
    head = f'<link rel="canonical" href="{canonical}">' if canonical else ""
    anchors = "".join(f'<li><a href="{link}">{link}</a></li>' for link in links)
    return (f"<!doctype html><html><head><title>{title}</title>{head}</head><body><h1>{title}</h1>"
            f"<p>{text}</p><ul>{anchors}</ul></body></html>")


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path
            site.requests[path] += 1
            site.user_agents.add(self.headers.get("User-Agent", ""))
            page = site.pages.get(path)
            if page is None:
                self._send(404, b"not found", {})
                return
            if page.location:
                self._send(page.status, b"", {"Location": page.location})
                return
            body = page.body.encode()
            tag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
            # A fixed date per body: the same page keeps it, a change moves it.
            stamp = f"Mon, 01 Jan 2024 00:{int(tag[1:3], 16) % 60:02d}:00 GMT"
            headers = {"Content-Type": page.content_type}
            if page.validator == "etag":
                headers["ETag"] = tag
                if self.headers.get("If-None-Match") == tag:
                    site.not_modified[path] += 1
                    self._send(304, b"", headers)
                    return
            elif page.validator == "last-modified":
                headers["Last-Modified"] = stamp
                if self.headers.get("If-Modified-Since") == stamp:
                    site.not_modified[path] += 1
                    self._send(304, b"", headers)
                    return
            self._send(page.status, body, headers)

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if status != 304:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if status != 304:
                self.wfile.write(body)

    return Handler


@contextmanager
def serve(site: Site) -> Iterator[Site]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    site.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
