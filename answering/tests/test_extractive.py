"""The offline answerer: three sentences at most, the entity first, nothing said twice, every
sentence verbatim from a chunk it cites (issue 16 item 5)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from answering.pipeline.extractive import extract_answer
from corpus.encoders.embedding import get_encoder
from corpus.tests.helpers import texts_encoded
from retrieval.search import Candidate

MEMORY = "20.4. Resource Consumption > 20.4.1. Memory"
WORK_MEM_BODY = (
    "Sets the base maximum amount of memory to be used by a query operation (such as a sort or hash table) "
    "before writing to temporary disk files. If this value is specified without units, it is taken as kilobytes. "
    "The default value is four megabytes ( 4MB). Note that a complex query might perform several sort and hash "
    "operations at the same time, with each operation generally being allowed to use as much memory as this "
    "value specifies before it starts to write data into temporary files."
)
_MARKER = re.compile(r"\s*\[(\d+)\]")
_LEAD = re.compile(r"`[^`]+`(?: \([^()]*\))?: ")


def candidate(chunk_id: int, heading_path: str, body: str, *, document_id: int | None = None) -> Candidate:
    return Candidate(chunk_id=chunk_id, document_id=document_id or chunk_id, slug=f"doc-{chunk_id}", title="Manual",
                     source_type="doc", heading_path=heading_path, content=f"{heading_path}\n\n{body}", page=None,
                     version="", effective_date=dt.date(2025, 1, 1), contested=False, fused_score=0.5,
                     ranks={"vector": 1}, vector_similarity=0.5, keyword_coverage=0.5, matched_terms=[])


def quoted(text: str) -> list[tuple[str, int]]:
    """(sentence, cited chunk id) pairs of an extractive answer, its entity lead removed."""
    lead = _LEAD.match(text)
    pieces = _MARKER.split(text[lead.end():] if lead else text)
    return [(pieces[i].strip(), int(pieces[i + 1])) for i in range(0, len(pieces) - 1, 2)]


def test_at_most_three_sentences() -> None:
    body = " ".join(f"Refunds for plan {name} are paid back to the original card within {days} business days."
                    for name, days in (("Basic", 5), ("Team", 6), ("Business", 7), ("Enterprise", 8), ("Starter", 9)))
    context = [candidate(1, "Billing > Refunds", body), candidate(2, "Billing > Cards", body.replace("plan", "tier"))]
    draft = extract_answer("When do refunds reach the card?", context)  # no amount asked (0139)
    assert not draft.declined and len(quoted(draft.text)) == 3


def test_one_passage_in_the_pages_order() -> None:
    """docs/decisions/0101: the best sentence's chunk is the answer, its sentences in the order
    the page has them; another chunk's sentence, however close, that holds no word of the
    question the passage lacks does not join. Seen red with the old pick (three best sentences
    of any chunk)."""
    context = [candidate(1, "Refunds > When the money arrives",
                         "Cardholders usually see the money back within 5 to 10 business days. "
                         "The refund shows on the statement as a credit from your business name."),
               candidate(2, "Add-ons > Removing an add-on",
                         "A removed add-on stays active until the period ends, and there are no partial refunds.")]
    draft = extract_answer("When do refunds reach the card?", context)  # no amount asked (0139)
    assert [chunk for _, chunk in quoted(draft.text)] == [1, 1], draft.text
    assert draft.text.startswith("Cardholders usually see the money back"), draft.text


def test_no_sentence_of_another_chunk_joins_the_passage() -> None:
    """docs/decisions/0107: even a close sentence of another chunk that holds a word of the
    question the passage lacks stays out (it was another page's fact more often than the
    missing half). Seen red with 0101's second-source rule."""
    context = [candidate(1, "Refunds > When the money arrives",
                         "Cardholders usually see the money back within 5 to 10 business days."),
               candidate(2, "Refunds > Fees",
                         "Refunds carry no extra fees, but the original processing fee is not returned.")]
    draft = extract_answer("How long do refunds take, and are there fees?", context)
    assert [chunk for _, chunk in quoted(draft.text)] == [1], draft.text


def test_the_sentence_whose_tokens_match_the_question_leads() -> None:
    """docs/decisions/0111: the pooled cosine put the setup step first ("Open Admin > Channels >
    Email"), the token match the sentence naming the record asked for. Seen red without it."""
    body = ("Open Admin > Channels > Email and choose Verify domain. "
            "Publish the `helpwise._domainkey` DKIM record so that replies are signed for your domain. "
            "Until the domain is verified, replies go out from your subdomain address with your support "
            "address as Reply-To.")
    draft = extract_answer("Which DNS record lets Helpwise send emails as our domain?",
                           [candidate(3, "Email channel > Sending from your domain", body)])
    assert draft.text.startswith("Publish the `helpwise._domainkey` DKIM record"), draft.text


def test_the_answer_leads_with_the_entity_its_best_sentence_belongs_to() -> None:
    context = [candidate(7, f"{MEMORY} > work_mem (integer)", WORK_MEM_BODY),
               candidate(8, MEMORY, "Memory settings control how the server uses RAM for caching and sorting.")]
    draft = extract_answer("Which setting caps the memory a sort uses before it spills to temporary disk files?",
                           context)
    assert draft.text.startswith("`work_mem` (integer, default 4MB): "), draft.text
    assert quoted(draft.text)[0] == (WORK_MEM_BODY.split(". ")[0] + ".", 7)


def test_a_heading_that_names_no_entity_gets_no_lead() -> None:
    draft = extract_answer("Which setting caps the memory a sort uses before it spills to temporary disk files?",
                           [candidate(7, MEMORY, WORK_MEM_BODY)])
    assert draft.text.startswith("Sets the base maximum amount of memory"), draft.text


# The PostgreSQL manual with definition-list entities off (the default, 0080): each <dt> is a
# line of its section, just above its definition.
WHEN_TO_LOG = (
    "To effectively turn off logging of failing statements, set this parameter to PANIC.\n"
    "log_min_duration_statement ( integer)\n"
    "Causes the duration of each completed statement to be logged if the statement ran for at least the specified "
    "amount of time. For example, if you set it to 250ms then all SQL statements that run 250ms or longer will be "
    "logged. The default is -1, which disables logging statement durations."
)
SLOW_QUERIES = "How do I make the server log every query that runs longer than 250ms?"


def test_a_definition_quoted_under_its_term_line_leads_with_the_term() -> None:
    draft = extract_answer(SLOW_QUERIES, [candidate(4, "20.8. Error Reporting and Logging > 20.8.2. When to Log",
                                                    WHEN_TO_LOG)])
    assert draft.text.startswith("`log_min_duration_statement` (integer): "), draft.text
    assert all(sentence in WHEN_TO_LOG for sentence, _ in quoted(draft.text))


def test_a_sentence_under_prose_gets_no_term_lead() -> None:
    body = WHEN_TO_LOG.replace("log_min_duration_statement ( integer)", "Statement durations can be logged as well.")
    draft = extract_answer(SLOW_QUERIES, [candidate(4, "20.8. Error Reporting and Logging > 20.8.2. When to Log", body)])
    assert not _LEAD.match(draft.text), draft.text


@pytest.mark.parametrize("line", ["BEGIN", "Decimal('4.68')", "fib(int(sys.argv))"])
def test_a_line_of_code_above_the_sentence_is_no_term(line: str) -> None:
    body = WHEN_TO_LOG.replace("log_min_duration_statement ( integer)", line)
    draft = extract_answer(SLOW_QUERIES, [candidate(4, "20.8. Error Reporting and Logging > 20.8.2. When to Log", body)])
    assert not _LEAD.match(draft.text), draft.text


@pytest.mark.parametrize(("term", "lead"), [
    ("full_clean(exclude=None, validate_unique=True)", "`full_clean(exclude=None, validate_unique=True)`: "),
    ("DEBUG", "`DEBUG`: "),
    ("--echo-all", "`--echo-all`: "),
])
def test_signatures_settings_and_options_lead_too(term: str, lead: str) -> None:
    body = "This call validates every field of the model instance and raises a validation error listing each problem."
    draft = extract_answer("How do I validate every field of a model instance?", [candidate(3, f"Models > {term}", body)])
    assert draft.text.startswith(lead), draft.text


def test_a_sentence_said_twice_is_quoted_once_and_filler_never() -> None:
    same = "Refunds are paid back to the original card within five business days of the request."
    near = "Refunds are paid back to the original card within five business days of a request."
    context = [candidate(1, "Billing > Refunds", f"{same} See Section 4.2 for more information."),
               candidate(2, "Help > Refunds", f"{near} The following refund options are available:"),
               candidate(3, "FAQ > Refunds", f"{same} A refund never includes the original processing fee.")]
    draft = extract_answer("How long do refunds take to reach the original card?", context)
    sentences = [s for s, _ in quoted(draft.text)]
    assert sum("within five business days" in s for s in sentences) == 1, sentences
    assert not any(s.startswith(("See ", "The following")) for s in sentences), sentences


def test_every_sentence_is_verbatim_from_a_chunk_it_cites() -> None:
    context = [candidate(7, f"{MEMORY} > work_mem (integer)", WORK_MEM_BODY),
               candidate(9, f"{MEMORY} > maintenance_work_mem (integer)",
                         "Specifies the maximum amount of memory to be used by maintenance operations, such as "
                         "VACUUM, CREATE INDEX, and ALTER TABLE ADD FOREIGN KEY. It defaults to 64 megabytes ( 64MB).")]
    draft = extract_answer("What is the maximum memory a sort or a maintenance operation may use?", context)
    by_id = {c.chunk_id: c.content for c in context}
    pairs = quoted(draft.text)
    assert pairs and set(draft.cited_chunk_ids) == {chunk for _, chunk in pairs}
    for sentence, chunk in pairs:
        assert sentence in by_id[chunk], (sentence, chunk)
    lead = _LEAD.match(draft.text)
    assert lead is not None, draft.text
    for word in re.findall(r"[\w.]+", lead.group(0).replace("default", "")):
        assert any(word in by_id[chunk] for chunk in draft.cited_chunk_ids), word


def test_a_sentence_ending_in_a_colon_can_be_the_answer() -> None:
    """It introduces the example that follows it; only a sentence announcing a list is filler."""
    body = "Send the key in the header as `Authorization: Bearer` followed by the key:\nAuthorization: Bearer hw_key_123"
    draft = extract_answer("How do I send the API key with a request?", [candidate(4, "API > Sending the key", body)])
    assert not draft.declined and draft.text.startswith("Send the key in the header"), draft


def test_an_identifier_is_named_only_as_a_whole_token() -> None:
    """maintenance_work_mem does not name work_mem; the sentences of work_mem's entity do, "this value" included."""
    maintenance = ("Specifies the maximum amount of memory to be used by maintenance operations. The default value of "
                   "maintenance_work_mem is 64 megabytes. Larger settings might improve performance for vacuuming.")
    context = [candidate(9, f"{MEMORY} > maintenance_work_mem (integer)", maintenance),
               candidate(7, f"{MEMORY} > work_mem (integer)", WORK_MEM_BODY)]
    draft = extract_answer("What's the default value of work_mem, and what unit does a plain number get?", context)
    assert draft.text.startswith("`work_mem` (integer, default 4MB): "), draft.text
    assert draft.cited_chunk_ids == [7] and "it is taken as kilobytes." in draft.text, draft.text


def test_a_hyphenated_word_is_no_name_the_answer_must_repeat() -> None:
    """"built-in" in the question is a word: the first chunk answers, and a later chunk's
    sentence that happens to say "built-in" does not win for it (docs/decisions/0133)."""
    mid_project = ("Changing AUTH_USER_MODEL after you have created database tables is significantly more "
                   "difficult since it affects foreign keys and many-to-many relationships. This change can't be "
                   "done automatically and requires manually fixing your schema and moving your data.")
    backends = ("Django comes with built-in database backends. You may subclass an existing database backend "
                "to modify its behavior, features, or configuration.")
    context = [candidate(1, "Customizing authentication > Changing to a custom user model mid-project", mid_project),
               candidate(2, "Databases > Subclassing the built-in database backends", backends)]
    draft = extract_answer("We started with the built-in user model and now want our own. Can I switch after the "
                           "tables already exist?", context)
    assert draft.cited_chunk_ids == [1], draft.text


def test_a_name_with_a_digit_underscore_or_dot_is_still_one() -> None:
    from answering.pipeline.extractive import question_identifiers

    assert question_identifiers("Why does SKU-77 fail with E1043 after setting work_mem and calling "
                                "os.path.join on a read-only, built-in, many-to-many thing?") == [
        "sku-77", "e1043", "work_mem", "os.path.join"]


def test_a_term_read_as_a_line_is_not_quoted() -> None:
    """With entities off a parameter's term is a line of its section; it names the thing but states nothing."""
    body = (f"{WORK_MEM_BODY}\nautovacuum_work_mem ( integer)\n"
            "Specifies the maximum amount of memory to be used by each autovacuum worker process.")
    draft = extract_answer("What is autovacuum_work_mem for?", [candidate(7, MEMORY, body)])
    assert "( integer)" not in draft.text and "each autovacuum worker process" in draft.text, draft.text


# helpwise-n040's page (corpus/demo/helpwise/docs/api/rate-limits.md).
PLAN_LIMITS = ("Team workspaces may send 600 requests per minute to the API. Business workspaces get 1,200 "
               "requests per minute. Starter workspaces have no API access.")


def test_a_sentence_whose_subject_is_only_in_its_heading_is_read_under_it() -> None:
    context = [candidate(3, "API rate limits > Limits per plan", PLAN_LIMITS),
               candidate(4, "Knowledge base > Article limits", "A workspace can publish up to 500 articles.")]
    draft = extract_answer("Is the rate limit higher on Business?", context)
    assert not draft.declined and quoted(draft.text)[0][1] == 3, draft.text
    assert "Business workspaces get 1,200 requests per minute." in draft.text


@pytest.mark.parametrize(("question", "headed"), [
    ("How much memory can a sort use before it spills to temporary disk files?", False),  # answered alone
    ("Is the rate limit higher on Business?", True),  # about to be declined: read under the headings
])
def test_headings_are_read_only_for_a_question_about_to_be_declined(monkeypatch: Any, question: str,
                                                                     headed: bool) -> None:
    seen = _encoded(monkeypatch)
    context = [candidate(3, "API rate limits > Limits per plan", PLAN_LIMITS),
               candidate(7, f"{MEMORY} > work_mem (integer)", WORK_MEM_BODY)]
    draft = extract_answer(question, context)
    under_heading = [t for t in seen if t.startswith(("API rate limits > ", f"{MEMORY} > "))]
    assert not draft.declined and bool(under_heading) == headed, (draft.text, seen)


def _encoded(monkeypatch: Any) -> list[str]:
    """Every text the extractive answerer hands the encoder for vectors, in order."""
    return texts_encoded(monkeypatch, get_encoder(), ("encode", "encode_with_states"))


def test_a_later_chunks_sentences_are_not_encoded_once_an_earlier_chunk_answers(monkeypatch: Any) -> None:
    """docs/decisions/0127: the passage is the first chunk with a quotable sentence, so the
    chunks after it cannot change the answer and are not read. Seen red with every context
    sentence scored in one call."""
    seen = _encoded(monkeypatch)
    later = "Unrelated later text about replication slots and their retention of WAL segments."
    context = [candidate(7, f"{MEMORY} > work_mem (integer)", WORK_MEM_BODY),
               candidate(3, "API rate limits > Limits per plan", PLAN_LIMITS),
               candidate(9, "Replication > Slots", later)]
    draft = extract_answer("How much memory can a sort use before it spills to temporary disk files?", context)
    assert not draft.declined and quoted(draft.text)[0][1] == 7, draft.text
    assert later not in seen and not any(line in seen for line in PLAN_LIMITS.split("\n")), seen


def test_a_chunk_is_read_when_the_ones_above_it_have_nothing_quotable(monkeypatch: Any) -> None:
    seen = _encoded(monkeypatch)
    context = [candidate(9, "Replication > Slots", "Replication slots retain WAL segments until a consumer confirms them."),
               candidate(7, f"{MEMORY} > work_mem (integer)", WORK_MEM_BODY)]
    draft = extract_answer("How much memory can a sort use before it spills to temporary disk files?", context)
    assert not draft.declined and quoted(draft.text)[0][1] == 7, draft.text
    assert any("retain WAL" in text for text in seen), seen


def test_two_contested_sources_are_answered_side_by_side_wherever_they_stand() -> None:
    """A contested chunk below the first quotable one is still scored (0127): the answer sets
    both sources' fees side by side. Seen red with contested chunks read in order like the rest."""
    fee = "Cross-border card payments carry a {} surcharge on top of the plan's per-transaction fee."
    context = [candidate(3, "Fees > Domestic", "Domestic card payments carry no surcharge beyond the plan's fee."),
               candidate(2, "Pricing > Plans", "The Growth plan costs $49 a month with card fees of 1.4% + 20p."),
               replace(candidate(1, "Pricing > Cards from abroad", fee.format("1%"), document_id=1),
                       contested=True, effective_date=dt.date(2026, 3, 1)),
               replace(candidate(4, "Old pricing > Cards from abroad", fee.format("2%"), document_id=4),
                       contested=True, effective_date=dt.date(2025, 1, 1))]
    draft = extract_answer("What surcharge applies to cross-border card payments?", context)
    assert draft.conflict and {cid for _, cid in quoted(draft.text)} == {1, 4}, draft.text


UPTIME_CONTEXT = [
    ("Enterprise service level agreement > Uptime commitment",
     "The payments API is covered by a 99.95% monthly uptime commitment. Scheduled maintenance announced in "
     "advance on the status page does not count as downtime."),
    ("Idempotent requests > How long keys are remembered",
     "PayLane stores each key together with the first response for 48 hours."),
    ("Why payments are declined",
     "The bank decides in real time and sends back a reason, which PayLane passes on to you unchanged."),
    ("Receiving webhooks > Delivery timeouts",
     "When that setting is left empty, PayLane waits 10 seconds before counting the attempt as failed."),
]


@pytest.mark.parametrize("penalty", [None, 0.0])
def test_the_top_chunks_sentence_is_quoted_when_the_tenants_name_pulls_others_closer(
        monkeypatch: Any, penalty: float | None) -> None:
    """docs/decisions/0061: "PayLane" in the question brings every sentence that repeats the name
    closer (cosine ~0.61) than the top chunk's 99.95% sentence (~0.50), which retrieval ranked
    first. 0061 weighed the retrieved order into each sentence's rank (without it, the forced
    fail, the answer led with another sentence); since 0101 the passage is the best-ranked chunk
    with a quotable sentence, so the answer leads with it whatever that weight (0101's forced
    fail, the anchor by sentence rank, was seen red on 0061's case with the weight at 0)."""
    if penalty is not None:
        monkeypatch.setattr("answering.pipeline.extractive.RANK_PENALTY", penalty)
    context = [candidate(i + 1, heading, body) for i, (heading, body) in enumerate(UPTIME_CONTEXT)]
    draft = extract_answer("What uptime does PayLane guarantee?", context)
    answer = UPTIME_CONTEXT[0][1].split(". ")[0] + "."
    assert quoted(draft.text)[0] == (answer, 1), draft.text


def test_the_token_match_reads_the_scoring_pass_and_encodes_only_the_question(monkeypatch: Any) -> None:
    """docs/decisions/0127: the passage's sentences were encoded to be scored, with their token
    states; MaxSim reads those and encodes the question alone. Seen red with the states dropped
    (every passage sentence encoded a second time)."""
    encoder = get_encoder()
    asked: list[str] = []
    real = encoder.token_embeddings

    def counted(texts: list[str]) -> Any:
        asked.extend(texts)
        return real(texts)

    monkeypatch.setattr(encoder, "token_embeddings", counted)
    question = "How much memory can a sort use before it spills to temporary disk files?"
    draft = extract_answer(question, [candidate(7, f"{MEMORY} > work_mem (integer)", WORK_MEM_BODY)])
    assert not draft.declined and asked == [question], asked


def test_a_sentence_scores_the_same_whatever_is_read_with_it() -> None:
    """docs/decisions/0127: the int8 encoder quantises a batch by its whole range, so sentences
    scored in one batch moved each other's cosines (by up to 0.02, deciding answers near the
    floor). Each is encoded alone. Seen red with the sentences batched."""
    from answering.pipeline.extractive import _score, _Sentence

    question = "How much memory can a sort use before it spills to temporary disk files?"
    chunk = candidate(7, f"{MEMORY} > work_mem (integer)", WORK_MEM_BODY)
    other = candidate(3, "API rate limits > Limits per plan", PLAN_LIMITS)
    mine = [_Sentence(text, chunk) for text in WORK_MEM_BODY.split(". ")]
    theirs = [_Sentence(text, other, place=1) for text in PLAN_LIMITS.split("\n") if text.strip()]
    alone = _score(question, mine, headed=False)
    together = _score(question, mine + theirs, headed=False)
    assert np.array_equal(alone.rank, together.rank[: len(mine)])
    assert all(a is not None and b is not None and np.array_equal(a, b) for a, b in zip(alone.states, together.states))
