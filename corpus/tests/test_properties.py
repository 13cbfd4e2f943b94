"""Property tests (hypothesis): the chunker and the identifier parser on arbitrary Unicode,
control characters and huge inputs. They must never raise, never lose the budget, never
produce an empty chunk."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus.ingest.chunking import chunk_sections
from corpus.encoders.embedding import get_encoder
from corpus.parsers import Section
from corpus.language.terms import EXACT_PREFIX, exact_terms

# Every code point hypothesis can draw, controls, surrogates excluded (not encodable as UTF-8,
# so no parser can hand them to us), plus the troublemakers we have met: NUL, BOM, RTL marks.
ANY_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=3000) | st.sampled_from([
    "\x00" * 50, "\ufeff# title", "\u202eevil\u202c" * 40, "a" * 20_000, "E1042. " * 500, "💥" * 900,
])
HEADINGS = st.lists(st.text(max_size=200), max_size=6).map(tuple)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(text=ANY_TEXT, heading=HEADINGS, target=st.integers(min_value=16, max_value=400))
def test_chunker_keeps_every_chunk_under_the_model_limit(text: str, heading: tuple[str, ...], target: int) -> None:
    encoder = get_encoder()
    drafts = chunk_sections([Section(heading_path=heading, text=text)], counter=encoder, target=target)
    for draft in drafts:
        assert draft.content.strip(), "an empty chunk was produced"
        assert encoder.count_tokens(draft.content) <= encoder.max_content_tokens
        assert draft.token_count == encoder.count_tokens(draft.content)


@PROPERTY
@given(text=ANY_TEXT)
def test_chunker_loses_no_word(text: str) -> None:
    encoder = get_encoder()
    drafts = chunk_sections([Section(heading_path=(), text=text)], counter=encoder, target=200)
    joined = " ".join(d.content for d in drafts)
    for word in text.split()[:200]:
        if len(word) < 30:  # a giant "word" is cut at the budget, so it appears in pieces
            assert word in joined


@settings(max_examples=300, deadline=None)
@given(text=ANY_TEXT)
def test_exact_terms_are_bounded_prefixed_and_lowercase(text: str) -> None:
    terms = exact_terms(text)
    assert len(terms) <= 256 and len(set(terms)) == len(terms)
    for term in terms:
        assert term.startswith(EXACT_PREFIX) and term == term.lower() and "\x00" not in term
