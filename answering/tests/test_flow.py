"""The typed stages of answering/pipeline/flow.py: prepare() → Prepared | Finished, complete(), the events."""

from __future__ import annotations

import pytest
from pytest_django import Settings

from answering.models import Trace
from answering.pipeline.flow import Delta, Done, Finished, Prepared, Sources, answer, answer_stream, complete, prepare
from answering.pipeline.limits import QuestionRejected
from tenants.models import Tenant
from tenants.rls import tenant_context

QUESTION = "What does error PL-4031 mean?"


def traces(tenant: Tenant) -> int:
    with tenant_context(tenant.id):
        return Trace.objects.count()


@pytest.mark.django_db
def test_prepare_finishes_a_greeting_without_retrieval_or_trace(paylane: Tenant) -> None:
    before = traces(paylane)
    step = prepare(tenant=paylane, audiences=["public"], question="Thanks!")
    assert isinstance(step, Finished) and step.result.action == "greeting" and step.sources == []
    assert traces(paylane) == before


@pytest.mark.django_db
def test_prepare_then_complete_is_what_answer_does(paylane: Tenant, settings: Settings) -> None:
    settings.CACHE_ENABLED = False
    step = prepare(tenant=paylane, audiences=["public"], question=QUESTION, conversation_id="typed-1")
    assert isinstance(step, Prepared)
    assert step.sources[0]["slug"] == "api/errors" and step.context and step.trace.stage_ms.keys() == {
        "rewrite", "retrieve"}
    result = complete(step)
    assert result.action == "answered" and result.trace_id and result.sources[0]["slug"] == "api/errors"
    with tenant_context(paylane.id):
        trace = Trace.objects.get(pk=result.trace_id)
    assert trace.conversation_id == "typed-1" and trace.stage_ms.keys() == {"rewrite", "retrieve", "generate",
                                                                             "citations"}
    assert trace.details["rewrite"]["method"] == "none" and trace.gate["passed"]


@pytest.mark.django_db
def test_prepare_finishes_a_repeated_question_from_the_cache(paylane: Tenant) -> None:
    first = answer(tenant=paylane, audiences=["public"], question=QUESTION)
    step = prepare(tenant=paylane, audiences=["public"], question=QUESTION)
    assert isinstance(step, Finished) and step.result.cache_hit and step.result.trace_id != first.trace_id
    assert step.sources == first.sources == step.result.sources and step.result.text == first.text


@pytest.mark.django_db
def test_prepare_finishes_weak_retrieval_with_an_escalation(paylane: Tenant) -> None:
    step = prepare(tenant=paylane, audiences=["public"], question="What is the capital of Mongolia?")
    assert isinstance(step, Finished) and step.result.action == "escalated" and step.result.escalation_id
    assert step.sources == [] and step.result.retrieved is not None


@pytest.mark.django_db
def test_a_stream_is_sources_then_deltas_then_done(paylane: Tenant) -> None:
    events = list(answer_stream(tenant=paylane, audiences=["public"], question=QUESTION))
    assert type(events[0]) is Sources and type(events[-1]) is Done
    assert all(type(e) is Delta for e in events[1:-1]) and len(events) > 2
    done = events[-1]
    assert isinstance(done, Done) and "".join(e.text for e in events if isinstance(e, Delta)) == done.result.text
    assert [e.kind for e in (events[0], events[1], done)] == ["sources", "token", "done"]


@pytest.mark.django_db
def test_a_greeting_streams_an_empty_sources_event_first(paylane: Tenant) -> None:
    events = list(answer_stream(tenant=paylane, audiences=["public"], question="Hello!"))
    assert events[0] == Sources("sources", []) and isinstance(events[-1], Done)
    assert events[-1].result.action == "greeting"


@pytest.mark.django_db
def test_a_rejected_question_raises_when_the_stream_is_asked_for_not_midway(paylane: Tenant) -> None:
    with pytest.raises(QuestionRejected, match="empty"):
        answer_stream(tenant=paylane, audiences=["public"], question="   ")
