"""A lower-case word the pages lack, no typo of theirs and no word of the language, is a name the
pages never mention (docs/decisions/0077): `certbot` asked of a help centre that has no page on
it. Its controls: a word the dictionary knows, a typo, chat shorthand."""

from __future__ import annotations

import pytest

from answering.pipeline.gate import confidence_gate
from retrieval.search import search
from retrieval.tests.conftest import RetrievalWorld
from retrieval.typos import chat_shorthand, coined_words
from tenants.scope import TenantScope


def _scope(world: RetrievalWorld) -> TenantScope:
    return TenantScope(tenant_id=world.acme.tenant.id, audience_ids=(world.acme.public_id,))


def _named(world: RetrievalWorld, question: str) -> tuple[str, ...]:
    return search(scope=_scope(world), query=question, ts_config="english", k=3).unknown_names


@pytest.mark.django_db
def test_a_word_no_dictionary_knows_is_a_name_the_pages_never_mention(retrieval_world: RetrievalWorld) -> None:
    question = "How long do refunds take when I pay through certbot?"
    result = search(scope=_scope(retrieval_world), query=question, ts_config="english", k=3)
    assert result.unknown_names == ("certbot",)
    decision = confidence_gate(result.candidates, result.query_coverage, unknown_names=result.unknown_names)
    assert not decision.passed and "certbot" in decision.reason


@pytest.mark.django_db
@pytest.mark.parametrize("question", [
    "How long do refunds take for my bicycle?",  # a word the dictionary knows, absent from the pages
    "How long do webhok retries take?",  # a typo the vocabulary corrects
    "How long do refunds take? need it asap",  # chat shorthand
    "How long do refunds take for order_77x?",  # the asker's own identifier
])
def test_known_words_typos_shorthand_and_identifiers_are_not_names(retrieval_world: RetrievalWorld,
                                                                   question: str) -> None:
    assert _named(retrieval_world, question) == ()


def test_the_shorthand_list_is_read_from_its_file() -> None:
    assert {"asap", "btw", "thx"} <= chat_shorthand() and not any(w.startswith("#") for w in chat_shorthand())


def test_a_language_without_a_dictionary_coins_nothing_and_does_not_fail() -> None:
    """A tenant whose language simplemma lacks (`ja` here) keeps 0051's rule alone: its searches
    must not fail on the unknown language."""
    written = {"certbot": "certbot"}
    assert coined_words(("certbot",), {}, written=written, language="en", names=frozenset()) == ("certbot",)
    assert coined_words(("certbot",), {}, written=written, language="ja", names=frozenset()) == ()
