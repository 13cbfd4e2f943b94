"""retrieval.pull on real PostgreSQL and the real encoder (docs/decisions/0067)."""

from __future__ import annotations

from typing import Any

import pytest

from retrieval.pull import lacking_word_pull, lexeme_spans, without_spans
from retrieval.search import search
from tenants.models import Tenant
from tenants.readers import reader_scope


@pytest.mark.django_db
def test_a_word_is_removed_where_postgresql_found_its_lexeme() -> None:
    text = "Is the sandbox throttled differently? Throttling again"
    spans = lexeme_spans(text, ts_config="english")
    assert spans["throttl"] == [(15, 24), (38, 48)]
    assert without_spans(text, spans["throttl"]) == "Is the sandbox differently? again"
    # A hyphenated whole and its parts share a place: removing a part keeps the text readable.
    assert "on-premis" in lexeme_spans("an on-premise server", ts_config="english")


def _pull(slug: str, question: str) -> Any:
    tenant = Tenant.objects.get(slug=slug)
    scope = reader_scope(tenant=tenant, audiences=["public"])
    found = search(scope=scope, query=question, ts_config=tenant.text_search_config)
    return lacking_word_pull(scope, found, ts_config=tenant.text_search_config, context_chunks=6)


@pytest.mark.django_db
def test_a_paraphrase_pulls_towards_the_evidence_and_an_absent_topic_away(demo_corpus: Any) -> None:
    throttled = _pull("paylane", "Is the sandbox throttled differently?")
    assert throttled.lexeme == "throttl" and throttled.without == "Is the sandbox differently?"
    assert throttled.pull > 0.12
    translate = _pull("helpwise", "Can Helpwise automatically translate incoming tickets?")
    assert translate.lexeme == "translat" and translate.pull < 0


@pytest.mark.django_db
def test_no_pull_when_the_context_holds_every_word(demo_corpus: Any) -> None:
    assert _pull("paylane", "What are the rate limits in test mode?") is None


@pytest.mark.django_db
def test_a_question_of_many_invented_words_costs_no_encode_per_word(demo_corpus: Any, monkeypatch: Any) -> None:
    """Hostile input: twenty words no page uses (the API takes 4,000 characters of them). They
    all tie for the top IDF, and encoding the question once without each would hold a worker. Seen red with
    MAX_TIED at 10,000 (a pull came back, from 20 questions encoded)."""
    import retrieval.pull as pull

    question = "Does the " + " ".join(f"zq{i}xv" for i in range(20)) + " work with refunds?"
    calls: list[int] = []
    encoder = pull.get_encoder()

    def counted() -> Any:
        calls.append(1)
        return encoder

    monkeypatch.setattr(pull, "get_encoder", counted)
    assert _pull("paylane", question) is None
    assert calls == []
