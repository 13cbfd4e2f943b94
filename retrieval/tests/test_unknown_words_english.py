"""An English tenant's gate is untouched by the keyed-language unknown-word rule (0050): the rule
reads the dictionary of a keyed language only, so switching it on changes nothing here."""

from __future__ import annotations

import pytest
from django.test import override_settings

from answering.pipeline.gate import confidence_gate
from retrieval.search import search
from retrieval.tests.conftest import RetrievalWorld, retrieval_world  # noqa: F401  (the shared world)
from tenants.scope import TenantScope

QUESTIONS = ("Can I pay for the starter plan with bitcoin?", "How do webhook retries work?",
             "How do I retry a webhook from my Flask app?", "what does E1043 mean")


@pytest.mark.django_db
@pytest.mark.parametrize("question", QUESTIONS)
def test_english_gate_is_the_same_with_the_unknown_word_rule_on(retrieval_world: RetrievalWorld,
                                                                question: str) -> None:
    scope = TenantScope(tenant_id=retrieval_world.acme.tenant.id, audience_ids=(retrieval_world.acme.public_id,))

    def gate(on: bool) -> tuple[object, ...]:
        with override_settings(ANSWER_GATE_UNKNOWN_WORDS=on):
            found = search(scope=scope, query=question, ts_config="english", language="en")
        decision = confidence_gate(found.candidates, found.query_coverage, unknown_names=found.unknown_names)
        return found.unknown_names, found.query_coverage, decision.passed, decision.reason

    assert gate(True) == gate(False)
