"""Code listings in the offline answer (docs/decisions/0084): a line of code is read as the whole
listing it belongs to; a fragment of a statement is never quoted alone, and a listing is quoted
whole and verbatim or not at all."""

from __future__ import annotations

import pytest

from answering.pipeline.citations import finalize
from answering.pipeline.extractive import _quotable, extract_answer, split_sentences
from answering.pipeline.listings import enclosing_listing, is_code, is_fragment, listing_after
from answering.tests.test_extractive import candidate

RANGES = "8.17. Range Types > 8.17.10. Constraints on Ranges"
RANGES_BODY = (
    "While UNIQUE is a natural constraint for scalar values, it is usually unsuitable for range types. "
    "Instead, an exclusion constraint is often more appropriate (see CREATE TABLE... CONSTRAINT... EXCLUDE). "
    "Exclusion constraints allow the specification of constraints such as “ non-overlapping ” on a range type. "
    "For example:\n"
    "CREATE TABLE reservation (\n"
    "    during tsrange,\n"
    "    EXCLUDE USING GIST (during WITH &&)\n"
    ");\n"
    "That constraint will prevent any overlapping values from existing in the table at the same time:\n"
    "INSERT INTO reservation VALUES\n"
    "    ('[2010-01-01 11:30, 2010-01-01 15:00)');\n"
    "INSERT 0 1\n"
    "You can use the btree_gist extension to define exclusion constraints on plain scalar data types.\n"
    "CREATE TABLE room_reservation ("
)
LISTING = "CREATE TABLE reservation (\n    during tsrange,\n    EXCLUDE USING GIST (during WITH &&)\n);"
QUESTION = "Room bookings have a start and end time. How do I make the database refuse a booking that overlaps another?"


@pytest.mark.parametrize("line", [
    "CREATE TABLE room_reservation (",
    "WHERE to_tsvector('english', body) @@ to_tsquery('english', 'friend');",
    "ERROR:  conflicting key value violates exclusion constraint \"reservation_during_excl\"",
    "def validate_even(value):",
    "class OneToOneField ( to, on_delete, parent_link = False, ** options) [source]",
    "transaction.on_commit(lambda: some_celery_task.delay('arg1'))",
    ">>> from datetime import date",
    "$ ./manage.py migrate --database=customers",
    "{% for story in story_list %}",
    "# Do some custom checks and add messages to `errors`:",
    "-- the same query, written with a join",
    "from django.db.migrations.writer import MigrationWriter",
    "<p>You have permission to do something in the foo app.</p>",
    "[ FETCH { FIRST | NEXT } [ count ] { ROW | ROWS } ONLY ]",
])
def test_a_line_of_code_is_code(line: str) -> None:
    assert is_code(line)


@pytest.mark.parametrize("line", [
    "Exclusion constraints allow the specification of constraints such as “ non-overlapping ” on a range type.",
    "Open Admin, then Billing, then Add-ons.",
    "Adjust `auto_close_after_hours` under Admin, then Automation.",
    "ON CONFLICT DO UPDATE SET table_name.col = 1 is invalid (this follows the general behavior for UPDATE).",
    "The default is 30 seconds.",
    "<p class=\"help\"> is replaced with a <div> tag to allow including lists inside help text.",
    "Note",
    "Severity levels are:",
])
def test_a_sentence_that_names_code_is_prose(line: str) -> None:
    assert not is_code(line)


def test_an_abbreviation_does_not_end_a_sentence() -> None:
    assert split_sentences("To reach it from other machines, use its own IP address (e.g. 192.168.2.1 or "
                           "10.0.0.1). Note that the default address is not reachable.") == [
        "To reach it from other machines, use its own IP address (e.g. 192.168.2.1 or 10.0.0.1).",
        "Note that the default address is not reachable."]


def test_a_fragment_of_a_statement_is_never_quoted() -> None:
    draft = extract_answer(QUESTION, [candidate(5, RANGES, RANGES_BODY)])
    assert not draft.declined
    assert "room_reservation" not in draft.text, draft.text
    assert "CREATE TABLE reservation (" not in draft.text or LISTING in draft.text, draft.text  # whole, or not at all


@pytest.mark.parametrize(("line", "fragment"), [
    ("CREATE TABLE room_reservation (", True),
    ("    during tsrange,", True),
    (");", True),
    ("id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)", False),
    ("EMAIL_BACKEND = 'django.core.mail.backends.console.EmailBackend'", False),
    ("    ('[2010-01-01 11:30, 2010-01-01 15:00)');", False),  # brackets inside a string are data
    ("    def items(self):", True),
    ("# Do some custom checks and add messages to `errors`:", True),
])
def test_a_fragment_is_a_statement_cut_short(line: str, fragment: bool) -> None:
    assert is_fragment(line) is fragment


def test_a_fragment_is_quoted_as_its_whole_listing_once() -> None:
    pieces = _quotable(RANGES_BODY)
    assert LISTING in pieces and pieces.count(LISTING) == 1
    assert not any(is_code(p) and is_fragment(p) and "\n" not in p for p in pieces), pieces
    # The room_reservation statement is cut by the chunk's end: no piece of it is quoted.
    assert not any("room_reservation" in p for p in pieces), pieces
    assert enclosing_listing(RANGES_BODY, "CREATE TABLE room_reservation (", max_lines=8, max_chars=400) == ""


def test_a_listing_over_the_limits_is_not_quoted_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("answering.pipeline.extractive.LISTING_LINES", 3)
    pieces = _quotable(RANGES_BODY)
    assert not any("tsrange" in p for p in pieces), pieces


def test_an_answer_quoting_a_listing_keeps_its_lines_and_indentation() -> None:
    context = [candidate(5, RANGES, f"{LISTING}\nINSERT 0 1 is what a successful insert prints.")]
    draft = extract_answer("What does a CREATE TABLE with an EXCLUDE USING GIST constraint on a tsrange look like?",
                           context)
    cited = finalize(draft, context)
    assert f"{LISTING} [1]" in cited.text, cited.text


def test_a_listing_the_chunk_cut_is_not_quoted() -> None:
    body = "Write the feed as a class:\nclass LatestEntries(Feed):\n    title = 'News'\n    def items(self):"
    assert enclosing_listing(body, "class LatestEntries(Feed):", max_lines=8, max_chars=400) == ""
    tail = "    return Entry.objects.all()\nclass Other(Feed):\n    title = 'Other'"
    assert enclosing_listing(tail, "class Other(Feed):", max_lines=8, max_chars=400) == ""
    whole = "Write the feed as a class:\nclass LatestEntries(Feed):\n    title = 'News'\nThat is all it takes."
    assert enclosing_listing(whole, "class LatestEntries(Feed):", max_lines=8, max_chars=400) == (
        "class LatestEntries(Feed):\n    title = 'News'")


def test_a_listing_whose_brackets_do_not_close_is_not_quoted() -> None:
    body = "Find the orders of active customers:\nSELECT * FROM orders WHERE customer_id IN (SELECT id\n    FROM customers"
    assert enclosing_listing(body, "SELECT * FROM orders WHERE customer_id IN (SELECT id",
                             max_lines=8, max_chars=400) == ""
    closed = f"{body})\nThat query returns every order."
    assert enclosing_listing(closed, "SELECT * FROM orders WHERE customer_id IN (SELECT id",
                             max_lines=8, max_chars=400).endswith("FROM customers)")


def test_a_prompts_indentation_survives_the_answers_clean_up() -> None:
    body = ("Chaining is turned off with from None:\n>>> try:\n...     print(1 / 0)\n... except:\n"
            "...     raise RuntimeError('bad') from None\nThat is all.")
    context = [candidate(5, "8.5. Exception Chaining", body)]
    draft = extract_answer("How do I raise RuntimeError from None inside except to print(1 / 0)?", context)
    cited = finalize(draft, context)
    assert "...     print(1 / 0)" in cited.text, cited.text


ANNOUNCING = "Exclusion constraints allow the specification of constraints such as “ non-overlapping ” on a range type."
FLASK = "Quickstart > A Minimal Application"
FLASK_BODY = ("A minimal Flask application looks something like this:\nfrom flask import Flask\napp = Flask(__name__)\n"
              "@app.route(\"/\")\ndef hello_world():\n    return \"<p>Hello, World!</p>\"\n"
              "So what did that code do? First we imported the Flask class.")


def test_the_listing_a_sentence_announces_comes_whole_with_its_opener() -> None:
    assert listing_after(RANGES_BODY, ANNOUNCING, max_lines=8, max_chars=400) == f"For example:\n{LISTING}"
    sentence = "A minimal Flask application looks something like this:"
    assert listing_after(FLASK_BODY, sentence, max_lines=8, max_chars=400) == FLASK_BODY.split("\n", 1)[1].rsplit(
        "\n", 1)[0]


def test_a_sentence_that_announces_nothing_gets_no_listing() -> None:
    sentence = "Instead, an exclusion constraint is often more appropriate (see CREATE TABLE... CONSTRAINT... EXCLUDE)."
    assert listing_after(RANGES_BODY, sentence, max_lines=8, max_chars=400) == ""
    assert listing_after(RANGES_BODY, ANNOUNCING, max_lines=3, max_chars=400) == ""  # too long: none at all


def test_an_announced_listing_follows_its_sentence() -> None:
    context = [candidate(5, FLASK, FLASK_BODY)]
    question = "What does a minimal Flask application look like?"
    text = finalize(extract_answer(question, context), context).text
    listing = listing_after(FLASK_BODY, "A minimal Flask application looks something like this:",
                            max_lines=8, max_chars=400)
    assert f"A minimal Flask application looks something like this:\n{listing} [1]" in text, text
    assert text.count("hello_world") == 1, text


VALIDATOR = (
    "For example, here’s a validator that only allows even numbers:\n"
    "from django.core.exceptions import ValidationError\n"
    "from django.utils.translation import gettext_lazy as _\n"
    "def validate_even(value):\n"
    "    if value % 2 != 0:\n"
    "        raise ValidationError(\n"
    "            _('%(value)s is not an even number'),\n"
    "            params={'value': value},\n"
    "        )\n"
    "You can add this to a model field via the field’s validators argument:\n"
)


def test_a_listing_line_that_reads_as_prose_is_still_the_listings() -> None:
    """A string literal in an indented call reads as prose to is_code; under a line of code and
    indented, it is the listing's, and is never quoted alone (djangodocs-dev2 dj2-025, 0088)."""
    literal = "_('%(value)s is not an even number'),"
    assert not is_code(literal) and is_fragment(literal)
    pieces = _quotable(VALIDATOR)
    assert literal not in pieces
    assert not any(literal in piece and "def validate_even" not in piece for piece in pieces)
    assert "You can add this to a model field via the field’s validators argument:" in pieces
