"""The API bugs schemathesis found, pinned in-process (docs/decisions/0026, 0027)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from answering.tests.test_api import QUESTION, error_code, issue, post


@pytest.fixture
def key(demo_corpus: Any, db: Any) -> str:
    return issue("paylane")


def chat(client: Client, key: str, body: dict[str, Any]) -> Any:
    return client.post("/api/v1/openai/chat/completions", data=json.dumps(body), content_type="application/json",
                       headers={"Authorization": f"Bearer {key}"})


@pytest.mark.parametrize("body", [
    {"question": QUESTION, "stream": 0},
    {"question": QUESTION, "stream": "false"},
    {"question": 42},
    {"question": QUESTION, "history": [{"role": "user", "content": 7}]},
])
def test_ask_refuses_values_of_the_wrong_json_type(key: str, client: Client, body: dict[str, Any]) -> None:
    response = post(client, "/ask", body, key)
    assert response.status_code == 422 and error_code(response) == "invalid_request"


@pytest.mark.parametrize(("vote", "trace_id", "status"), [
    (True, 1, 422),            # a boolean is not an integer in JSON Schema
    ("1", 1, 422),
    (1, "1", 422),
    (1, 1.5, 422),
    (1, 999_999_999.0, 404),   # an integral number is an integer: accepted, then not found
    (-1.0, 999_999_999, 404),
])
def test_feedback_types_follow_json_schema(key: str, client: Client, vote: Any, trace_id: Any, status: int) -> None:
    response = post(client, "/feedback", {"trace_id": trace_id, "vote": vote}, key)
    assert response.status_code == status, response.content


@pytest.mark.parametrize("extra", [{"stream": 0}, {"n": "1"}, {"max_tokens": True}, {"temperature": "0.5"},
                                   {"stream_options": [None, None]}, {"stream_options": "yes"}])
def test_openai_refuses_coerced_values_with_a_400_error_object(key: str, client: Client, extra: dict[str, Any]) -> None:
    response = chat(client, key, {"model": "answerdesk-extractive",
                                  "messages": [{"role": "user", "content": QUESTION}], **extra})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_openai_accepts_integral_numbers_and_int_temperatures(key: str, client: Client) -> None:
    response = chat(client, key, {"model": "answerdesk-extractive", "messages": [{"role": "user", "content": QUESTION}],
                                  "n": 1.0, "max_tokens": 50, "temperature": 0})
    assert response.status_code == 200, response.content


def test_multipart_without_a_boundary_is_a_400_not_a_500(key: str, client: Client) -> None:
    response = client.post("/api/v1/documents", data=b"--x\r\n", content_type="multipart/form-data",
                           headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 400 and error_code(response) == "bad_request"


def test_the_documents_describe_what_the_server_enforces(db: Any, client: Client) -> None:
    native = client.get("/api/v1/openapi.json").json()
    upload = native["paths"]["/api/v1/documents"]["post"]
    form = upload["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    assert form["files"]["minItems"] == 1
    assert form["source_type"]["enum"] == ["doc", "changelog", "ticket", "pdf"]
    assert {"400", "403"} <= set(upload["responses"])
    assert "422" in native["paths"]["/api/v1/jobs/{job_id}"]["get"]["responses"]
    stream = native["paths"]["/api/v1/ask"]["post"]["responses"]["200"]["content"]["text/event-stream"]["schema"]
    assert stream["properties"]["event"]["enum"] == ["sources", "token", "done", "error"]
    openai = client.get("/api/v1/openai/openapi.json").json()
    for path, method in (("/api/v1/openai/chat/completions", "post"), ("/api/v1/openai/models", "get"),
                         ("/api/v1/openai/models/{model_id}", "get")):
        assert {"200", "400", "401", "404", "429"} <= set(openai["paths"][path][method]["responses"]), path
    ok = {path: openai["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
          for path, method in (("/api/v1/openai/chat/completions", "post"), ("/api/v1/openai/models", "get"),
                               ("/api/v1/openai/models/{model_id}", "get"))}
    assert [ref.rsplit("/", 1)[1] for ref in ok.values()] == ["ChatCompletionOut", "ModelListOut", "ModelOut"]
    bounds = openai["components"]["schemas"]["ChatIn"]["properties"]["max_tokens"]["anyOf"][0]
    assert (bounds["minimum"], bounds["maximum"]) == (1, 131_072)
