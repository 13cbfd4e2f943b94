"""Real servers on loopback for the handoff tests: an SMTP server (aiosmtpd) that keeps what it
receives, and an HTTP webhook receiver (http.server in a thread) that records each request and
answers with the status codes it is told to."""

from __future__ import annotations

import email
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Mailbox:
    messages: list[Message] = field(default_factory=list)
    port: int = 0  # the SMTP controller's, once it listens
    recipients: list[list[str]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(email.message_from_bytes(envelope.content))
        self.recipients.append(list(envelope.rcpt_tos))
        return "250 OK"

    def to(self, address: str) -> list[Message]:
        return [m for m, rcpt in zip(self.messages, self.recipients) if address in rcpt]


@pytest.fixture
def smtp_server(settings: Any) -> Iterator[Mailbox]:
    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    try:
        yield mailbox
    finally:
        controller.stop()


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    requests: list[Received] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)  # answered in order; 200 once they run out


@pytest.fixture
def webhook_receiver(settings: Any) -> Iterator[Receiver]:
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True  # loopback, for the test only
    receiver = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length", "0"))
            receiver.requests.append(Received(self.path, dict(self.headers.items()), self.rfile.read(length)))
            status = receiver.statuses.pop(0) if receiver.statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/answerdesk"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
