"""Czech follow-ups and Czech typing on the Czech demo tenant (issue 49 item 3): a follow-up
answers the follow-up, a question without diacritics or with a typo finds the page the spelled
question finds, and a paraphrase in other word forms finds its page.

The typed variants: the issue's own question, and golden-set questions (demo-tlapka n034,
n036, n050, n054) whose variants escalated or found another page before the folded stop forms
(corpus/language/keys.py) and the keyed one-edit correction (retrieval/typos.py). A sweep of all
92 tlapka-n questions (each folded, and each with two letters of its longest word swapped)
measured both fixes: their commit message has the numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from answering.pipeline.config import configuration
from answering.pipeline.extractive import split_sentences
from answering.pipeline.flow import AnswerResult, answer
from tenants.models import Tenant

pytestmark = pytest.mark.django_db

SHIPPING = "Jak dlouho trvá doručení?"
RETURN_OPENED_FOOD = "Můžu vrátit otevřené krmivo?"  # the follow-up


def _ask(question: str, history: Sequence[dict[str, str]] = ()) -> AnswerResult:
    return answer(tenant=Tenant.objects.get(slug="tlapka"), audiences=["public"], question=question,
                  history=list(history), config=configuration().with_overrides({"answer.use_cache": False}))


def _page(result: AnswerResult) -> str:
    return result.sources[0]["slug"] if result.action == "answered" and result.sources else result.action


def _sentences(text: str) -> set[str]:
    return set(split_sentences(re.sub(r"\s*\[\d+\]", "", text)))


def test_a_czech_follow_up_is_answered_about_the_follow_up(demo_corpus: Any) -> None:
    """After the product's own shipping answer, the return question is answered about returns:
    the opened food, not the delivery time again. Seen red with the earlier answer's sentences
    no longer recognised as said (extractive.is_repeat answering False): the second delivery
    sentence was quoted."""
    first = _ask(SHIPPING)
    assert first.action == "answered" and "1–2 pracovních dnů" in first.text, first.text
    follow_up = _ask(RETURN_OPENED_FOOD, [{"role": "user", "content": SHIPPING},
                                          {"role": "assistant", "content": first.text}])
    assert follow_up.action == "answered" and _page(follow_up).startswith("vraceni/"), follow_up.sources
    assert "eotevřené krmivo" in follow_up.text and "doruč" not in follow_up.text, follow_up.text
    assert not _sentences(follow_up.text) & _sentences(first.text)


# Both failed while a Czech follow-up of six words or fewer was joined to the turn before (the
# English rule: a Czech question is whole in three words) and the joined search ranked the earlier
# topic's page first. A Czech follow-up is now joined only when it points back (docs/decisions/0115).


def test_a_czech_follow_up_after_an_earlier_answer_in_other_words(demo_corpus: Any) -> None:
    """The golden set's own turn (tlapka-m001): an assistant turn that is not the product's
    quote, as an API client sends it. Answered about delivery before Christmas while every short
    Czech follow-up was joined to the turn before (red then)."""
    follow_up = _ask(RETURN_OPENED_FOOD, [
        {"role": "user", "content": SHIPPING},
        {"role": "assistant", "content": "Zásilkovna i PPL doručují obvykle do 1–2 pracovních dnů od odeslání."}])
    assert follow_up.action == "answered" and _page(follow_up).startswith("vraceni/"), follow_up.text


def test_a_short_czech_question_of_its_own_is_not_answered_from_the_turn_before(demo_corpus: Any) -> None:
    """Answered from the voucher's neighbour, the discount-code page, while every short Czech
    follow-up was joined to the turn before (red then)."""
    voucher = "Jak dlouho platí dárkový poukaz?"
    first = _ask(voucher)
    follow_up = _ask("Můžu zaplatit dobírkou?", [{"role": "user", "content": voucher},
                                                 {"role": "assistant", "content": first.text}])
    assert _page(follow_up) == "platby/platebni-metody", (follow_up.sources, follow_up.text)


# (spelled, without diacritics or with a typo): the variant must find the spelled question's page.
TYPED = [
    (RETURN_OPENED_FOOD, "Muzu vratit otevrene krmivo?"),
    (RETURN_OPENED_FOOD, "Můžu vrátit otevřené krmvio?"),  # escalated: `krmvio` was no word, corrected nowhere
    ("Můžu předplatné zrušit a stojí to něco?", "Muzu predplatne zrusit a stoji to neco?"),  # n034: `muzu`
    ("Čím krmit psa s alergií?", "Cim krmit psa s alergii?"),  # n036: `cim`
    ("Čím krmit psa s alergií?", "Čím krmit psa s alregií?"),
    ("Kolik pamlsků denně může pes dostat?", "Kolik palmsků denně může pes dostat?"),  # n050
    ("Jak dlouho musí nové akvárium běžet, než do něj pustím ryby?",
     "Jak dlouho musi nove akvarium bezet, nez do nej pustim ryby?"),  # n054: `musi`, `nez`
    ("Jak dlouho musí nové akvárium běžet, než do něj pustím ryby?",
     "Jak dlouho musí nové akvráium běžet, než do něj pustím ryby?"),
]


@pytest.mark.parametrize(("spelled", "typed"), TYPED)
def test_a_question_typed_without_diacritics_or_with_a_typo_finds_the_spelled_questions_page(
        demo_corpus: Any, spelled: str, typed: str) -> None:
    expected = _ask(spelled)
    assert expected.action == "answered", spelled
    found = _ask(typed)
    assert _page(found) == _page(expected), (typed, found.action, found.sources[:1], expected.sources[:1])


# Paraphrases in other word forms than the page's (Co lze vrátit: "Krmivo a pamlsky přijmeme zpět
# jen neotevřené a v původním obalu"; Doba doručení: "Zásilkovna i PPL doručují obvykle do 1–2
# pracovních dnů").
@pytest.mark.parametrize(("question", "page", "says"), [
    ("Přijímáte zpět pamlsky v otevřených obalech?", "vraceni/vraceni-zbozi", "pamlsky přijmeme zpět"),
    ("Kolik dní trvá doručování zásilek?", "doprava/doruceni", "1–2 pracovních dnů"),
])
def test_an_inflected_paraphrase_finds_its_page(demo_corpus: Any, question: str, page: str, says: str) -> None:
    found = _ask(question)
    assert _page(found) == page and says in found.text, (found.sources[:1], found.text)


@pytest.mark.xfail(strict=True, reason=(
    "Verb aspect pairs are two lemmas (doručit/doručovat): no key joins `doručíte` to the page's "
    "`doručují`, and the ticket that says `balík … k doručení` ranks first; a reader of Czech "
    "(a multilingual encoder, issue 49 item 1) was expected to join them; multilingual-e5 (0112) "
    "does not: the ticket still ranks first."))
def test_a_paraphrase_in_the_other_aspect_finds_its_page(demo_corpus: Any) -> None:
    assert _page(_ask("Za kolik pracovních dní mi doručíte balík?")) == "doprava/doruceni"
