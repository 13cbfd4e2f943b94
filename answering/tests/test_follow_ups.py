"""Follow-ups answer the follow-up (docs/decisions/0100): searched as asked first, scored against
the follow-up when joined to the turn before, and never a sentence the conversation has already
given. Issue 47's case: "What about cards from abroad?" after the Growth plan's price was
answered with the price again, word for word."""

from __future__ import annotations

import re
from typing import Any

import pytest

from answering.pipeline.config import configuration
from answering.pipeline.extractive import extract_answer, split_sentences
from answering.pipeline.flow import answer
from answering.tests.test_extractive import candidate, quoted
from tenants.models import Tenant

PLANS = ("Since January 2025 the Growth plan costs $35/month, with the dashboard, API access and email support "
         "included. The Scale plan costs $249/month and adds higher rate limits and a named account manager.")
CARD_FEES = ("Domestic card payments cost 2.7% + $0.30 per successful charge on every plan. Cards issued outside "
             "your country add a 1% surcharge.")
FIRST_ANSWER = ("Since January 2025 the Growth plan costs $35/month, with the dashboard, API access and email support "
                "included. [1] The Scale plan costs $249/month and adds higher rate limits and a named account "
                "manager. [1]")
JOINED = "How much does the Growth plan cost per month? What about cards from abroad?"


def _sentences(answer_text: str) -> list[str]:
    return split_sentences(re.sub(r"\s*\[\d+\]", "", answer_text))


def _context() -> list[Any]:
    return [candidate(1, "Pricing > Plans and monthly fees", PLANS), candidate(2, "Pricing > Card processing fees",
                                                                               CARD_FEES)]


def test_a_sentence_already_given_is_never_quoted_again() -> None:
    """The same question asked again gets what it was not told yet, never the same sentences."""
    question = "How much does the Growth plan cost per month?"
    given = set(_sentences(FIRST_ANSWER))
    control = extract_answer(question, _context())
    assert {s for s, _ in quoted(control.text)} & given, control.text  # without `said`: the same answer
    draft = extract_answer(question, _context(), said=[FIRST_ANSWER])
    assert draft.declined or not {s for s, _ in quoted(draft.text)} & given, draft.text


def test_the_follow_up_is_answered_not_the_question_before() -> None:
    """Scored against the joined query, the plan's price wins; against the follow-up, the surcharge."""
    joined_only = extract_answer(JOINED, _context())
    assert quoted(joined_only.text)[0][1] == 1, joined_only.text  # the control: the old answer
    draft = extract_answer(JOINED, _context(), focus="What about cards from abroad?")
    assert "1% surcharge" in draft.text and quoted(draft.text)[0][1] == 2, draft.text


def test_a_follow_up_that_finds_nothing_of_its_own_falls_back_to_the_joined_query() -> None:
    draft = extract_answer(JOINED, _context(), focus="and that one?")
    assert not draft.declined


@pytest.mark.django_db
def test_a_conversation_never_repeats_its_last_answer(demo_corpus: Any) -> None:
    paylane = Tenant.objects.get(slug="paylane")
    config = configuration().with_overrides({"answer.use_cache": False})
    first = answer(tenant=paylane, audiences=["public"], question="How much does the Growth plan cost per month?",
                   config=config)
    assert first.action == "answered" and "$35/month" in first.text
    history = [{"role": "user", "content": "How much does the Growth plan cost per month?"},
               {"role": "assistant", "content": first.text}]
    follow_up = answer(tenant=paylane, audiences=["public"], question="What about cards from abroad?",
                       history=history, config=config)
    said_again = set(_sentences(follow_up.text)) & set(_sentences(first.text))
    assert follow_up.action == "answered" and not said_again, follow_up.text


def test_a_quoted_line_of_code_or_a_lead_already_given_is_not_quoted_again() -> None:
    """An earlier answer's pieces are read piece by piece (each ends at its marker): a line of
    code has no full stop to split at, and an entity lead prefixes its first sentence
    (pgdev2-037 and -039 repeated both before this)."""
    body = ("This parameter can only be set in the postgresql.conf file or on the server command line. "
            "It controls how often the startup process logs a long-running operation.")
    context = [candidate(1, "Logging > log_startup_progress_interval (integer)", body)]
    earlier = ("`log_startup_progress_interval` (integer, default 10 seconds): This parameter can only be set in the postgresql.conf "
               "file or on the server command line. [1] IF a_running_job_count > 0 THEN [2]")
    draft = extract_answer("Where do I set log_startup_progress_interval?", context, said=[earlier])
    assert "can only be set in the postgresql.conf" not in draft.text, draft.text
