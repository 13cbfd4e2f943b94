"""A client-chosen conversation id belongs to the principal that sent it (docs/decisions/0093).

The two-key scenario of issue 45: an internal key asks under `crm-ticket-1001`; a public key
asks an escalating question under the same id with the attacker's contact. Export and erasure
of that contact, and the conversation the public key's escalation records, must hold only
what the public key's own asks produced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from answering.models import Escalation, Trace
from answering.tests.test_api import issue, post
from tenants.models import Tenant
from tenants.rls import tenant_context

pytestmark = pytest.mark.django_db
CONVERSATION = "crm-ticket-1001"
INTERNAL_QUESTION = "Is there a discount code for agency partners?"
# The internal partner page's code and the internal ticket's (T-10318): the insider is quoted one.
INTERNAL_CODES = ("PLN-PARTNER-20", "PLN-AGENCY-15")
ATTACKER = "attacker@example.com"
ESCALATING = "Can I pay my invoice with a Zorblat gift card?"


def _two_keys_ask(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
    insider = post(client, "/ask", {"question": INTERNAL_QUESTION, "conversation_id": CONVERSATION},
                   issue("paylane", ("public", "internal"))).json()
    assert insider["action"] == "answered" and any(code in insider["answer"] for code in INTERNAL_CODES)
    history = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi, how can I help?"}]
    outsider = post(client, "/ask", {"question": ESCALATING, "conversation_id": CONVERSATION, "history": history,
                                     "contact": ATTACKER}, issue("paylane", ("public",))).json()
    assert outsider["action"] == "escalated", outsider
    # The client's own handle comes back as it was sent.
    assert insider["conversation_id"] == outsider["conversation_id"] == CONVERSATION
    return insider, outsider


def test_two_keys_under_one_conversation_id_never_share_export_erasure_or_history(
        demo_corpus: Any, client: Client, tmp_path: Path) -> None:
    paylane = Tenant.objects.get(slug="paylane")
    insider, outsider = _two_keys_ask(client)
    with tenant_context(paylane.id):
        stored = dict(Trace.objects.filter(pk__in=[insider["trace_id"], outsider["trace_id"]])
                      .values_list("pk", "conversation_id"))
        escalation = Escalation.objects.get(pk=outsider["escalation_id"])
    assert stored[insider["trace_id"]] != stored[outsider["trace_id"]]
    assert CONVERSATION in stored[outsider["trace_id"]]  # still findable by the client's id in the console
    # History is what this key sent, never a turn of the other key's conversation.
    assert not any(code in json.dumps(escalation.history) or code in outsider["answer"] for code in INTERNAL_CODES)
    assert [turn["content"] for turn in escalation.history] == ["Hello", "Hi, how can I help?"]

    out = tmp_path / "attacker.json"
    call_command("export", tenant="paylane", contact=ATTACKER, output=str(out))
    exported = json.loads(out.read_text())
    assert [q["question"] for q in exported["questions"]] == [ESCALATING]
    assert not any(code in out.read_text() for code in INTERNAL_CODES) and INTERNAL_QUESTION not in out.read_text()

    call_command("erase", tenant="paylane", contact=ATTACKER)
    with tenant_context(paylane.id):
        assert Trace.objects.filter(pk=insider["trace_id"]).exists()  # the other person's trace stays
        assert not Trace.objects.filter(pk=outsider["trace_id"]).exists()
        assert not Escalation.objects.filter(pk=outsider["escalation_id"]).exists()


def test_the_same_key_keeps_one_conversation_across_asks(demo_corpus: Any, client: Client) -> None:
    """Binding is by principal, not per request: one key's turns under one id stay one conversation."""
    key = issue("paylane", ("public",))
    first = post(client, "/ask", {"question": ESCALATING, "conversation_id": "c-7", "contact": ATTACKER}, key).json()
    second = post(client, "/ask", {"question": "What does error PL-4031 mean?", "conversation_id": "c-7"}, key).json()
    with tenant_context(Tenant.objects.get(slug="paylane").id):
        ids = set(Trace.objects.filter(pk__in=[first["trace_id"], second["trace_id"]])
                  .values_list("conversation_id", flat=True))
    assert len(ids) == 1


def test_the_openai_endpoint_binds_its_derived_id_to_the_key(demo_corpus: Any, client: Client) -> None:
    """Its id is derived from the first message: two keys opening with the same words are two conversations."""
    def complete(key: str) -> int:
        response = client.post("/api/v1/openai/chat/completions", content_type="application/json",
                               data=json.dumps({"model": "answerdesk",
                                                "messages": [{"role": "user", "content": ESCALATING}],
                                                "answerdesk": {"contact": ATTACKER}}),
                               headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 200, response.content[:300]
        return int(response.json()["answerdesk"]["trace_id"])

    first, second = complete(issue("paylane", ("public", "internal"))), complete(issue("paylane", ("public",)))
    with tenant_context(Tenant.objects.get(slug="paylane").id):
        ids = dict(Trace.objects.filter(pk__in=[first, second]).values_list("pk", "conversation_id"))
    assert ids[first] and ids[second] and ids[first] != ids[second]
