"""Faults through the real API over HTTP: providers that break, hang or are down, and the
database stopped under a running server (issue 9, docs/reliability.md).

One uvicorn process (`serve`) is configured with a chain of three providers: the OpenAI and
Gemini dialects of the scripted fake provider (it runs in this test process, so each test
scripts its behaviour in the queues), then an OpenAI-dialect provider on a port nobody
listens on. Whatever the fault, a question that passes the retrieval gate must come back as
HTTP 200 with the abstention text, an escalation id and an escalation row, never a 500.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.db import connections

from answering.tests.fake_provider import Script, fake_provider
from config import embedded_db
from config.liveserver import serve

pytestmark = pytest.mark.slow  # a uvicorn process of its own
QUESTION = "What does error PL-4031 mean?"
PROVIDER_TIMEOUT = 2
# Far past the timeout, so an answer that waited for a hanging provider could not pass the time bound.
HANG = 40


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class FaultServer:
    url: str
    key: str
    script: Script


@pytest.fixture(scope="module")
def faulty(demo_corpus: Any, django_db_blocker: Any) -> Iterator[FaultServer]:
    from tenants import actions
    from tenants.models import Tenant

    with django_db_blocker.unblock():
        key = actions.api_key_create(tenant=Tenant.objects.get(slug="paylane"),
                                     name=f"faults-{uuid.uuid4().hex[:8]}").raw_key
    with fake_provider() as (fake_url, script):
        chain = ",".join([
            f"openai|{fake_url}/v1|FAKE_OPENAI_KEY|gpt-4o-mini|{PROVIDER_TIMEOUT}",
            f"gemini|{fake_url}/v1beta|FAKE_GEMINI_KEY|gemini-2.0-flash|{PROVIDER_TIMEOUT}",
            f"openai|http://127.0.0.1:{_closed_port()}/v1|FAKE_OPENAI_KEY|gpt-4.1-mini|{PROVIDER_TIMEOUT}",
        ])
        env = {"ANSWER_PROVIDERS": chain, "FAKE_OPENAI_KEY": "sk-fault", "FAKE_GEMINI_KEY": "gm-fault",
               # A cached answer would skip the providers, and the limits are not under test here.
               "CACHE_ENABLED": "0", "API_RATE_LIMIT_PER_KEY": "0", "API_RATE_LIMIT_PER_ADDRESS": "0"}
        with serve(extra_env=env) as url:
            yield FaultServer(url=url, key=key, script=script)


@pytest.fixture
def server(faulty: FaultServer) -> Iterator[FaultServer]:
    faulty.script.openai.clear()
    faulty.script.gemini.clear()
    faulty.script.requests.clear()
    yield faulty
    # Every scripted behaviour was consumed: the fault really happened on the provider's side.
    assert not faulty.script.openai and not faulty.script.gemini, "a scripted provider was never called"


def model_answer(text: str, citations: list[int]) -> str:
    return json.dumps({"answer": text, "citations": citations, "declined": False})


FAULTS: dict[str, tuple[tuple[str, Any], tuple[str, Any], list[str]]] = {
    # fault: (OpenAI-dialect behaviour, Gemini-dialect behaviour, error kinds the trace records)
    "cut_mid_stream": (("cut", model_answer("PL-4031 means insufficient funds [1].", [1])),
                       ("cut", model_answer("PL-4031 means insufficient funds [1].", [1])),
                       ["bad_response", "bad_response", "overloaded"]),
    "hang_past_timeout": (("hang", (HANG, model_answer("late [1]", [1]))), ("hang", (HANG, model_answer("late", [1]))),
                          ["timeout", "timeout", "overloaded"]),
    "all_down": (("status", (503, None, '{"error": "down"}')), ("status", (502, None, "bad gateway")),
                 ["overloaded", "overloaded", "overloaded"]),
}


def ask_json(server: FaultServer) -> dict[str, Any]:
    response = httpx.post(f"{server.url}/api/v1/ask", json={"question": QUESTION},
                          headers={"Authorization": f"Bearer {server.key}"}, timeout=120)
    assert response.status_code == 200, response.text[:500]
    return dict(response.json())


def ask_stream(server: FaultServer) -> dict[str, Any]:
    events: list[tuple[str, Any]] = []
    with httpx.stream("POST", f"{server.url}/api/v1/ask", json={"question": QUESTION, "stream": True},
                      headers={"Authorization": f"Bearer {server.key}"}, timeout=120) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = "message"
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[len("event: "):]
            elif line.startswith("data: "):
                events.append((kind, json.loads(line[len("data: "):])))
    kinds = [k for k, _ in events]
    assert "error" not in kinds, events
    assert kinds[0] == "sources" and kinds[-1] == "done", kinds
    return dict(events[-1][1])


def ask_openai(server: FaultServer) -> dict[str, Any]:
    response = httpx.post(f"{server.url}/api/v1/openai/chat/completions",
                          json={"model": "answerdesk", "messages": [{"role": "user", "content": QUESTION}]},
                          headers={"Authorization": f"Bearer {server.key}"}, timeout=120)
    assert response.status_code == 200, response.text[:500]
    body = response.json()
    assert body["choices"][0]["message"]["content"].startswith(settings.ANSWER_ABSTAIN_TEXT)
    extension = dict(body["answerdesk"])
    return {**extension, "answer": body["choices"][0]["message"]["content"]}


def ask_openai_stream(server: FaultServer) -> dict[str, Any]:
    chunks: list[dict[str, Any]] = []
    with httpx.stream("POST", f"{server.url}/api/v1/openai/chat/completions",
                      json={"model": "answerdesk", "stream": True, "messages": [{"role": "user", "content": QUESTION}]},
                      headers={"Authorization": f"Bearer {server.key}"}, timeout=120) as response:
        assert response.status_code == 200
        data = [line[len("data: "):] for line in response.iter_lines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]", data[-3:]
    chunks = [json.loads(d) for d in data[:-1]]
    assert all("error" not in c for c in chunks), chunks
    final = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"] == "stop"]
    assert len(final) == 1
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    return {**final[0]["answerdesk"], "answer": text}


ENDPOINTS = {"ask_json": ask_json, "ask_stream": ask_stream, "openai": ask_openai, "openai_stream": ask_openai_stream}


def escalation_row(escalation_id: int, django_db_blocker: Any) -> tuple[Any, Any]:
    from answering.models import Escalation
    from tenants.models import Tenant
    from tenants.rls import tenant_context

    with django_db_blocker.unblock():
        tenant = Tenant.objects.get(slug="paylane")
        with tenant_context(tenant.id):
            escalation = Escalation.objects.select_related("trace").get(pk=escalation_id)
            return escalation, escalation.trace


def test_control_a_healthy_provider_answers_through_the_same_server(server: FaultServer) -> None:
    """Without this, the fault tests could pass against a server that never calls a model."""
    server.script.openai.append(("ok", model_answer("PL-4031 means the card has insufficient funds [1].", [1])))
    body = ask_json(server)
    assert body["action"] == "answered" and body["escalation_id"] is None
    assert "insufficient funds [1]" in body["answer"]
    assert [r["dialect"] for r in server.script.requests] == ["openai"]


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_provider_fault_is_a_clean_abstention_with_an_escalation(
    server: FaultServer, fault: str, endpoint: str, django_db_blocker: Any
) -> None:
    first, second, kinds = FAULTS[fault]
    server.script.openai.append(first)
    server.script.gemini.append(second)
    started = time.monotonic()
    body = ENDPOINTS[endpoint](server)
    elapsed = time.monotonic() - started
    assert body["action"] == "escalated" and body["escalation_id"] and body["trace_id"]
    assert body["answer"].startswith(settings.ANSWER_ABSTAIN_TEXT) and "insufficient funds" not in body["answer"]
    escalation, trace = escalation_row(body["escalation_id"], django_db_blocker)
    assert escalation.reason == "providers_failed" and escalation.status == "open"
    assert trace.pk == body["trace_id"] and trace.action == "escalated"
    assert [a["kind"] for a in trace.details["attempts"]] == kinds
    # Each hanging provider costs its timeout, not the hang; the rest is retrieval on a busy machine.
    assert elapsed < 2 * PROVIDER_TIMEOUT + 25 < HANG, elapsed


@pytest.mark.skipif(bool(os.environ.get("DATABASE_URL")), reason="stops the embedded server")
def test_database_down_is_a_json_503_and_service_resumes_by_itself(
    faulty: FaultServer, django_db_blocker: Any
) -> None:
    pgdata = Path(os.environ["ANSWERDESK_PGDATA"])
    headers = {"Authorization": f"Bearer {faulty.key}"}
    ask = {"model": "answerdesk-extractive", "messages": [{"role": "user", "content": QUESTION}]}
    with django_db_blocker.unblock():
        connections.close_all()
        assert embedded_db.stop(pgdata)
        try:
            for method, path, body in (("POST", "/api/v1/ask", {"question": QUESTION}),
                                       ("POST", "/api/v1/ask", {"question": QUESTION, "stream": True}),
                                       ("GET", "/api/v1/health", None),
                                       ("POST", "/api/v1/openai/chat/completions", ask)):
                started = time.monotonic()
                response = httpx.request(method, f"{faulty.url}{path}", json=body, headers=headers, timeout=30)
                assert time.monotonic() - started < 15, f"{path} hung while the database was down"
                assert response.status_code == 503, (path, response.status_code, response.text[:300])
                assert response.headers["content-type"].startswith("application/json"), response.text[:300]
                error = response.json().get("error")
                if path == "/api/v1/health":
                    assert response.json()["database"]["reachable"] is False
                else:
                    assert error["code"] == "service_unavailable" and "database" in error["message"]
                    assert int(response.headers["Retry-After"]) > 0
                assert "Traceback" not in response.text and "psycopg" not in response.text
        finally:
            embedded_db.ensure_running(pgdata)
    # Nothing restarts the app server: its next requests simply reconnect.
    deadline = time.monotonic() + 30
    while True:
        response = httpx.post(f"{faulty.url}/api/v1/ask", json={"question": QUESTION}, headers=headers, timeout=60)
        if response.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert response.status_code == 200, response.text[:300]
    assert httpx.get(f"{faulty.url}/api/v1/health", timeout=30).status_code == 200
