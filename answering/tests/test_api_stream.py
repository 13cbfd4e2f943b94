"""POST /api/v1/ask as server-sent events over a real HTTP connection to the live server."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

QUESTION = "What does error PL-4031 mean?"


@pytest.fixture(scope="module")
def live_keys(demo_corpus: Any, django_db_blocker: Any) -> dict[str, str]:
    """Committed keys (the server is another process); unique names so no other test collides."""
    from tenants import actions
    from tenants.models import Tenant

    tag = uuid.uuid4().hex[:8]
    with django_db_blocker.unblock():
        return {slug: actions.api_key_create(tenant=Tenant.objects.get(slug=slug), name=f"stream-{tag}").raw_key
                for slug in ("paylane", "helpwise")}


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    event, data = "message", list[str]()
    for line in lines:
        if line == "":
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def stream(live_url: str, key: str, body: dict[str, Any], **headers: str) -> list[tuple[str, dict[str, Any]]]:
    with httpx.stream("POST", f"{live_url}/api/v1/ask", json=body, timeout=120,
                      headers={"Authorization": f"Bearer {key}", **headers}) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert "content-length" not in response.headers  # sent as it is produced, not buffered whole
        return list(sse_events(response.iter_lines()))


def test_sources_arrive_before_the_first_token_and_done_carries_the_trace(live_url: str,
                                                                          live_keys: dict[str, str]) -> None:
    events = stream(live_url, live_keys["paylane"], {"question": QUESTION}, Accept="text/event-stream")
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "sources" and kinds.count("sources") == 1 and kinds[-1] == "done"
    assert "token" in kinds and kinds.index("sources") < kinds.index("token")
    assert any(s["slug"] == "api/errors" for s in events[0][1]["sources"])
    done = events[-1][1]
    assert done["action"] == "answered" and done["trace_id"]
    assert "".join(data["text"] for kind, data in events if kind == "token") == done["answer"]
    # The trace id in `done` is the one feedback takes.
    feedback = httpx.post(f"{live_url}/api/v1/feedback", json={"trace_id": done["trace_id"], "vote": 1},
                          headers={"X-API-Key": live_keys["paylane"]}, timeout=30)
    assert feedback.status_code == 200
    stolen = httpx.post(f"{live_url}/api/v1/feedback", json={"trace_id": done["trace_id"], "vote": -1},
                        headers={"X-API-Key": live_keys["helpwise"]}, timeout=30)
    assert stolen.status_code == 404 and stolen.json()["error"]["code"] == "not_found"


def test_stream_flag_in_the_body_also_streams_and_an_abstention_names_its_escalation(
        live_url: str, live_keys: dict[str, str]) -> None:
    events = stream(live_url, live_keys["paylane"], {"question": "What is the capital of Mongolia?", "stream": True})
    assert events[0] == ("sources", {"sources": []})
    done = events[-1][1]
    assert done["action"] == "escalated" and done["escalation_id"] and done["sources"] == []


def test_a_rejected_streamed_question_is_a_json_error_before_any_event(live_url: str,
                                                                       live_keys: dict[str, str]) -> None:
    response = httpx.post(f"{live_url}/api/v1/ask", json={"question": "   ", "stream": True}, timeout=30,
                          headers={"Authorization": f"Bearer {live_keys['paylane']}"})
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_request"


def test_openapi_docs_are_served(live_url: str) -> None:
    assert httpx.get(f"{live_url}/api/v1/docs", timeout=30).status_code == 200
    assert httpx.get(f"{live_url}/api/v1/openapi.json", timeout=30).json()["info"]["title"] == "Answerdesk API"
