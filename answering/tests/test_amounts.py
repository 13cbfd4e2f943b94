"""A question that asks for one amount is answered by the passage's sentence that states it, alone
(docs/decisions/0139); a question that asks more, or asks how to find or change the amount,
keeps the passage."""

from __future__ import annotations

import pytest

from answering.pipeline.amounts import asks_one_amount
from answering.pipeline.extractive import extract_answer
from answering.tests.test_extractive import candidate, quoted

RECORDINGS = ("Recording is off until an admin turns on Record calls for a number. "
              "Recordings are kept for 60 days and then deleted. "
              "In many countries callers must be told they are recorded.")
DOBIRKA = ("Dobírku doručí kurýr PPL a zaplatíte ji při převzetí hotově nebo kartou. "
           "Za dobírku se připlácí 39 Kč. "
           "Na Slovensko dobírku neposíláme.")


@pytest.mark.parametrize("question", [
    "How long are call recordings stored?",
    "How much does the Growth plan cost per month?",
    "Is there a maximum number of tickets per import?",
    "What is the default webhook timeout?",
    "What's the API rate limit?",
    "Kolik se připlácí za dobírku?",
    "kolik se priplaci za dobirku",
    "Zapomněla jsem heslo, jak dlouho platí odkaz na nové?",
    "Jak často mám měnit bentonitové stelivo?",
])
def test_a_question_for_one_amount(question: str) -> None:
    assert asks_one_amount(question)


@pytest.mark.parametrize("question", [
    # a second question
    "How long are recordings kept, and how do I turn recording on?",
    "What is the default of DATA_UPLOAD_MAX_MEMORY_SIZE and what happens when a request body is bigger?",
    "Jak dlouho trvá doručení a kolik stojí?",
    "Chtěl bych vidět, kolik procent baterie zbývá. Jak to zapnu?",
    # the amount inside a question about a method
    "How can I see how much of my request quota is left?",
    "Can I change how long PayLane waits for my webhook endpoint to respond?",
    "How do I set Black's maximum line length in pyproject.toml?",
    "kde zjistím, kolik mám volného místa na disku",
    # no amount asked
    "How do I make VS Code use the interpreter from my project's .venv folder by default?",
    "Can I get a higher rate limit?",
    "Which key is safe to put in my frontend code?",
])
def test_not_a_question_for_one_amount(question: str) -> None:
    assert not asks_one_amount(question)


def test_the_sentence_that_states_the_amount_is_the_answer() -> None:
    """Seen red without the cue: the passage's three sentences were quoted."""
    draft = extract_answer("How long are call recordings stored?",
                           [candidate(1, "Phone and voicemail > Call recordings", RECORDINGS)])
    assert quoted(draft.text) == [("Recordings are kept for 60 days and then deleted.", 1)], draft.text


def test_a_czech_question_for_an_amount_gets_the_sentence_that_states_it() -> None:
    draft = extract_answer("Kolik se připlácí za dobírku?", [candidate(2, "Platební metody > Dobírka", DOBIRKA)])
    assert quoted(draft.text) == [("Za dobírku se připlácí 39 Kč.", 2)], draft.text


def test_a_question_that_asks_more_keeps_the_passage() -> None:
    draft = extract_answer("How long are call recordings stored, and how do I turn recording on?",
                           [candidate(1, "Phone and voicemail > Call recordings", RECORDINGS)])
    assert len(quoted(draft.text)) >= 2, draft.text


def test_a_passage_without_a_figure_is_quoted_as_before() -> None:
    body = ("Recordings are kept until the retention period ends and are then deleted. "
            "Recording is off until an admin turns on Record calls for a number.")
    draft = extract_answer("How long are call recordings stored?",
                           [candidate(1, "Phone and voicemail > Call recordings", body)])
    assert len(quoted(draft.text)) == 2, draft.text


def test_the_figure_comes_from_the_passage_not_another_chunk() -> None:
    """The passage is still the best-ranked chunk with a quotable sentence (0107): a figure in a
    later chunk does not pull the answer away from it."""
    passage = ("Call recordings are stored until the retention period ends and then deleted. "
               "Recording is off until an admin turns on Record calls for a number.")
    other = "Voicemail greetings can be up to 60 seconds long."
    draft = extract_answer("How long are call recordings stored?",
                           [candidate(1, "Phone and voicemail > Call recordings", passage),
                            candidate(2, "Phone and voicemail > Voicemail", other)])
    assert {chunk for _, chunk in quoted(draft.text)} == {1}, draft.text


def test_a_figure_that_points_back_does_not_stand_alone() -> None:
    """"It is kept for 60 days" says nothing without the sentence before it: the passage stays.
    Seen red without the check (the answer was that sentence alone)."""
    body = ("Every call recording is stored in the Helpwise cloud. "
            "It is kept for 60 days and then deleted.")
    draft = extract_answer("How long are call recordings stored?",
                           [candidate(1, "Phone and voicemail > Call recordings", body)])
    assert len(quoted(draft.text)) == 2, draft.text


@pytest.mark.parametrize(("question", "heading", "body", "answer"), [
    ("How many priority levels can an SLA policy have?", "SLA policies > Priorities",
     "A policy sets reply targets for up to four priority levels. "
     "Open Admin > Automation > SLA policies and choose New policy. Enter the targets per priority.",
     "A policy sets reply targets for up to four priority levels."),
    ("Jak často se má v akváriu měnit voda?", "Akvária > Výměna vody",
     "Jednou týdně vyměňte zhruba pětinu vody v akváriu. Novou vodu ošetřete upravovačem, který odstraní chlor.",
     "Jednou týdně vyměňte zhruba pětinu vody v akváriu."),
])
def test_an_amount_written_in_words_is_a_figure(question: str, heading: str, body: str, answer: str) -> None:
    """docs/decisions/0141. Seen red with digits alone counted as figures."""
    draft = extract_answer(question, [candidate(5, heading, body)])
    assert quoted(draft.text) == [(answer, 5)], draft.text
