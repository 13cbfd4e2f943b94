"""A text encoded alone is run once per answer, and gives what it gives without the memo
(docs/decisions/0130)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from corpus.encoders.embedding import get_encoder
from corpus.encoders.passes import remembered_passes
from corpus.tests.helpers import texts_encoded


def _runs(monkeypatch: Any) -> list[str]:
    """Every text that reaches the model."""
    return texts_encoded(monkeypatch, get_encoder().backend, ("embed", "embed_with_states", "token_embeddings"))


QUESTION = "How do I raise max_connections?"
SENTENCES = ["Set max_connections in postgresql.conf.", "The default is 100 connections."]


def test_inside_an_answer_a_text_alone_is_run_once_and_gives_the_same_result(monkeypatch: Any) -> None:
    encoder = get_encoder()
    plain_vector = encoder.encode_query(QUESTION)
    plain_states = encoder.token_embeddings([QUESTION])[0]
    plain_scored = encoder.encode_with_states([QUESTION, *SENTENCES], batch_size=1)
    seen = _runs(monkeypatch)
    with remembered_passes():
        vector = encoder.encode_query(QUESTION)
        states = encoder.token_embeddings([QUESTION])[0]
        scored = encoder.encode_with_states([QUESTION, *SENTENCES], batch_size=1)
        claims = encoder.encode([SENTENCES[1]], batch_size=1)
    assert seen.count(QUESTION) == 1 and seen.count(SENTENCES[1]) == 1, seen
    np.testing.assert_array_equal(vector, plain_vector)
    np.testing.assert_array_equal(states, plain_states)
    np.testing.assert_array_equal(scored[0], plain_scored[0])
    np.testing.assert_array_equal(claims[0], plain_scored[0][2])


def test_outside_an_answer_or_batched_nothing_is_remembered(monkeypatch: Any) -> None:
    encoder = get_encoder()
    seen = _runs(monkeypatch)
    encoder.encode_query(QUESTION)
    encoder.encode_query(QUESTION)
    with remembered_passes():
        encoder.encode([QUESTION, *SENTENCES])  # a batch: its results depend on its batch-mates
        encoder.encode([QUESTION, *SENTENCES])
    assert seen.count(QUESTION) == 4, seen


@pytest.mark.django_db
def test_an_answer_runs_its_question_through_the_model_once(demo_corpus: Any, monkeypatch: Any) -> None:
    """Search, the reranker's token match, the sentence scores and the passage's token match all
    read the question: seen four times without the memo."""
    from answering.pipeline.flow import answer
    from tenants.models import Tenant

    paylane = Tenant.objects.get(slug="paylane")
    seen = _runs(monkeypatch)
    question = "What does error PL-4031 mean?"
    result = answer(tenant=paylane, audiences=["public"], question=question)
    assert result.action == "answered" and seen.count(question) == 1, seen.count(question)
