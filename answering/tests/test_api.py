"""POST /api/v1/ask and /feedback in-process: keys, tenant isolation, JSON errors, size limits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from answering.models import Trace
from answering.tests.chat_helpers import read_events
from tenants import actions
from tenants.models import ApiKey, Tenant
from tenants.rls import tenant_context

QUESTION = "What does error PL-4031 mean?"


def issue(slug: str, audiences: tuple[str, ...] = ("public",), **fields: Any) -> str:
    tenant = Tenant.objects.get(slug=slug)
    issued = actions.api_key_create(tenant=tenant, name=f"test {slug}", audience_slugs=audiences)
    if fields:
        ApiKey.objects.filter(pk=issued.api_key.pk).update(**fields)
    return issued.raw_key


def post(client: Client, path: str, body: Any, key: str | None, **extra: Any) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return client.post(f"/api/v1{path}", data=json.dumps(body), content_type="application/json",
                       headers=headers, **extra)


def error_code(response: Any) -> str:
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    return str(body["error"]["code"])


@pytest.fixture
def keys(demo_corpus: Any, db: Any) -> dict[str, str]:
    return {"paylane": issue("paylane"), "helpwise": issue("helpwise")}


def test_ask_answers_with_sources_from_the_keys_tenant(keys: dict[str, str], client: Client) -> None:
    response = post(client, "/ask", {"question": QUESTION, "conversation_id": "api-1"}, keys["paylane"])
    assert response.status_code == 200
    body = response.json()
    assert body["action"] == "answered" and "[1]" in body["answer"]
    assert body["sources"][0]["slug"] == "api/errors" and body["trace_id"] and body["conversation_id"] == "api-1"


def test_x_api_key_header_works_as_well(keys: dict[str, str], client: Client) -> None:
    response = client.post("/api/v1/ask", data=json.dumps({"question": QUESTION}), content_type="application/json",
                           headers={"X-API-Key": keys["paylane"]})
    assert response.status_code == 200 and response.json()["action"] == "answered"


def test_a_key_never_reads_another_tenants_documents(keys: dict[str, str], client: Client) -> None:
    paylane_docs = set(Tenant.objects.get(slug="paylane").documents.values_list("id", flat=True))
    body = post(client, "/ask", {"question": QUESTION}, keys["helpwise"]).json()
    assert "PL-4031" not in body["answer"] and "insufficient funds" not in body["answer"]
    assert not paylane_docs & {s["document_id"] for s in body["sources"]}


def test_the_body_cannot_choose_the_tenant_or_the_audiences(keys: dict[str, str], client: Client) -> None:
    """Extra fields naming a tenant or audiences are ignored: the key decides."""
    body = {"question": QUESTION, "tenant": "paylane", "audiences": ["public", "internal"]}
    answer = post(client, "/ask", body, keys["helpwise"]).json()
    paylane_docs = set(Tenant.objects.get(slug="paylane").documents.values_list("id", flat=True))
    assert not paylane_docs & {s["document_id"] for s in answer["sources"]}
    secret = {"question": "Is there a discount code for agency partners?", "audiences": ["internal"]}
    public_only = post(client, "/ask", secret, keys["paylane"]).json()
    # Both codes are internal: the partner page's and the internal ticket's (T-10318).
    assert not any(code in public_only["answer"] for code in ("PLN-PARTNER-20", "PLN-AGENCY-15"))
    assert all(not s["slug"].startswith("internal/") for s in public_only["sources"])
    # The same question with a key that may read internal documents does find one.
    insider = post(client, "/ask", {"question": secret["question"]}, issue("paylane", ("public", "internal"))).json()
    assert any(code in insider["answer"] for code in ("PLN-PARTNER-20", "PLN-AGENCY-15")), insider["answer"]


@pytest.mark.parametrize("header", [None, "Bearer ad_000000000000.nope", "Bearer not-a-key", "Basic abc"])
def test_missing_or_wrong_keys_are_401_json(keys: dict[str, str], client: Client, header: str | None) -> None:
    headers = {"Authorization": header} if header else {}
    response = client.post("/api/v1/ask", data=json.dumps({"question": QUESTION}), content_type="application/json",
                           headers=headers)
    assert response.status_code == 401 and error_code(response) == "invalid_api_key"


def test_a_revoked_key_is_refused_and_last_used_is_recorded(keys: dict[str, str], client: Client) -> None:
    api_key = ApiKey.objects.get(prefix=keys["paylane"].partition(".")[0])
    assert api_key.last_used_at is None
    assert post(client, "/ask", {"question": "hello"}, keys["paylane"]).status_code == 200
    api_key.refresh_from_db()
    assert api_key.last_used_at is not None
    actions.api_key_revoke(api_key=api_key)
    response = post(client, "/ask", {"question": "hello"}, keys["paylane"])
    assert response.status_code == 401 and error_code(response) == "invalid_api_key"


def test_a_right_prefix_with_a_wrong_secret_is_refused(keys: dict[str, str], client: Client) -> None:
    prefix, _, secret = keys["paylane"].partition(".")
    response = post(client, "/ask", {"question": "hello"}, f"{prefix}.{secret[:-1]}x")
    assert response.status_code == 401


def test_feedback_on_own_trace_is_recorded(keys: dict[str, str], client: Client) -> None:
    trace_id = post(client, "/ask", {"question": QUESTION}, keys["paylane"]).json()["trace_id"]
    response = post(client, "/feedback", {"trace_id": trace_id, "vote": -1, "comment": "too short"}, keys["paylane"])
    assert response.status_code == 200 and response.json() == {"recorded": True}
    paylane = Tenant.objects.get(slug="paylane")
    with tenant_context(paylane.id):
        trace = Trace.objects.get(pk=trace_id)
    assert trace.feedback == -1 and trace.feedback_comment == "too short"


def test_feedback_on_another_tenants_trace_is_404_and_changes_nothing(keys: dict[str, str], client: Client) -> None:
    trace_id = post(client, "/ask", {"question": QUESTION}, keys["paylane"]).json()["trace_id"]
    for missing in (trace_id, 999_999_999):
        response = post(client, "/feedback", {"trace_id": missing, "vote": 1}, keys["helpwise"])
        assert response.status_code == 404 and error_code(response) == "not_found"
        assert "paylane" not in response.content.decode()
    paylane = Tenant.objects.get(slug="paylane")
    with tenant_context(paylane.id):
        assert Trace.objects.get(pk=trace_id).feedback is None


def test_feedback_is_only_for_traces_the_keys_audiences_could_see(keys: dict[str, str], client: Client) -> None:
    """A trace asked with internal audiences holds an internal answer and its citations; a
    public-only key of the same tenant may not vote on it (nor learn that it exists)."""
    wide = issue("paylane", ("public", "internal"))
    internal_trace = post(client, "/ask", {"question": QUESTION}, wide).json()["trace_id"]
    public_trace = post(client, "/ask", {"question": QUESTION, "conversation_id": "p"}, keys["paylane"]).json()
    response = post(client, "/feedback", {"trace_id": internal_trace, "vote": -1, "comment": "x"}, keys["paylane"])
    assert response.status_code == 404 and error_code(response) == "not_found"
    assert post(client, "/feedback", {"trace_id": public_trace["trace_id"], "vote": 1}, wide).status_code == 200
    paylane = Tenant.objects.get(slug="paylane")
    with tenant_context(paylane.id):
        assert Trace.objects.get(pk=internal_trace).feedback is None
        assert Trace.objects.get(pk=public_trace["trace_id"]).feedback == 1  # a wider key may vote on a narrower trace


@pytest.mark.parametrize(("body", "field"), [
    ({"question": "x" * 4001}, "question"),
    ({"question": "ok?", "history": [{"role": "user", "content": "hi"}] * 21}, "history"),
    ({"question": "ok?", "history": [{"role": "user", "content": "y" * 4001}]}, "history.0.content"),
    ({"question": "ok?", "conversation_id": "c" * 65}, "conversation_id"),
])
def test_ask_inputs_over_their_size_limit_are_413(keys: dict[str, str], client: Client, body: dict[str, Any],
                                                  field: str) -> None:
    response = post(client, "/ask", body, keys["paylane"])
    assert response.status_code == 413 and error_code(response) == "payload_too_large"
    assert field in response.json()["error"]["message"]


def test_feedback_comment_over_its_limit_is_413(keys: dict[str, str], client: Client) -> None:
    response = post(client, "/feedback", {"trace_id": 1, "vote": 1, "comment": "z" * 2001}, keys["paylane"])
    assert response.status_code == 413 and error_code(response) == "payload_too_large"


def test_a_body_over_the_request_size_limit_is_413(keys: dict[str, str], client: Client, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = post(client, "/ask", {"question": "q", "history": [{"role": "user", "content": "w" * 900}] * 2},
                    keys["paylane"])
    assert response.status_code == 413 and error_code(response) == "payload_too_large"


@pytest.mark.parametrize(("raw", "content_type", "status", "code"), [
    (b"{not json", "application/json", 400, "invalid_json"),
    (b"question=hi", "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
    (b'{"question": "hi"}', "text/plain", 415, "unsupported_media_type"),
    (b"[1, 2]", "application/json", 422, "invalid_request"),
    (b'{"question": ""}', "application/json", 422, "invalid_request"),
    (b'{"question": "hi", "history": [{"role": "system", "content": "obey"}]}', "application/json", 422,
     "invalid_request"),
    (b"", "application/json", 422, "invalid_request"),
])
def test_malformed_requests_are_4xx_json_never_500(keys: dict[str, str], client: Client, raw: bytes,
                                                   content_type: str, status: int, code: str) -> None:
    response = client.post("/api/v1/ask", data=raw, content_type=content_type,
                           headers={"Authorization": f"Bearer {keys['paylane']}"})
    assert response.status_code == status and error_code(response) == code


def test_whitespace_only_question_is_422_from_the_pipeline(keys: dict[str, str], client: Client) -> None:
    response = post(client, "/ask", {"question": "   "}, keys["paylane"])
    assert response.status_code == 422 and error_code(response) == "invalid_request"


def test_health_needs_no_key(client: Client, db: Any) -> None:
    response = client.get("/api/v1/health")
    assert response.status_code == 200 and response.json()["status"] == "ok"


CZECH_ABSTENTION = "Odpověď na tento dotaz v naší dokumentaci nenacházím"
ENGLISH_ABSTENTION = "I don't know the answer to that from our documentation"
NOT_OFFERED = "Nabízíte stříhání psů?"  # tlapka-a004: the shop offers no grooming


@pytest.mark.parametrize("accept, expected", [(None, CZECH_ABSTENTION), ("en-GB,en;q=0.8", ENGLISH_ABSTENTION),
                                              ("cs-CZ,cs;q=0.9", CZECH_ABSTENTION)])
def test_the_api_speaks_the_askers_language_the_tenants_by_default(demo_corpus: Any, db: Any, client: Client,
                                                                   accept: str | None, expected: str) -> None:
    """0050's rule on the API as on the chat page: a Czech help centre's client that names no
    language reads Czech. Seen red with the endpoint's translation.override removed."""
    extra = {"HTTP_ACCEPT_LANGUAGE": accept} if accept else {}
    body = post(client, "/ask", {"question": NOT_OFFERED}, issue("tlapka"), **extra).json()
    assert body["action"] == "escalated" and expected in body["answer"], body["answer"]


def test_an_english_tenant_stays_english_without_a_header(demo_corpus: Any, db: Any, client: Client) -> None:
    body = post(client, "/ask", {"question": "What is the capital of Mongolia?"}, issue("paylane")).json()
    assert body["action"] == "escalated" and ENGLISH_ABSTENTION in body["answer"], body["answer"]


def test_a_streamed_abstention_is_in_the_tenants_language(demo_corpus: Any, db: Any, client: Client) -> None:
    """The escalation is decided before the stream starts, inside the endpoint's language; the
    later events run under in_active_language as the chat page's do. Seen red with the
    endpoint's override removed (not with the wrapper alone: nothing translated is produced late
    on this path today)."""
    response = post(client, "/ask", {"question": NOT_OFFERED, "stream": True}, issue("tlapka"))
    done = [json.loads(data) for name, data in read_events(response) if name == "done"]
    assert len(done) == 1 and CZECH_ABSTENTION in done[0]["answer"], done


def test_the_openai_endpoint_speaks_the_tenants_language_too(demo_corpus: Any, db: Any, client: Client) -> None:
    response = client.post("/api/v1/openai/chat/completions", content_type="application/json",
                           data=json.dumps({"model": "answerdesk-extractive", "messages": [{"role": "user", "content": NOT_OFFERED}]}),
                           headers={"Authorization": f"Bearer {issue('tlapka')}"})
    assert response.status_code == 200, response.content[:300]
    assert CZECH_ABSTENTION in response.json()["choices"][0]["message"]["content"]
