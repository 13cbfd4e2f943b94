from __future__ import annotations

from collections.abc import Sequence

from corpus.ingest.chunking import chunk_sections, enforce_limit, split_units, ChunkDraft
from corpus.encoders.embedding import Encoder
from corpus.parsers import Section


def test_heading_path_is_prepended_and_kept_clean(encoder: Encoder) -> None:
    [chunk] = chunk_sections([Section(("Billing", "Invoices", "Proration"), "We prorate upgrades.")],
                             counter=encoder, target=200)
    assert chunk.heading_path == "Billing > Invoices > Proration"
    assert chunk.content == "Billing > Invoices > Proration\n\nWe prorate upgrades."


def test_long_text_packs_whole_sentences_under_the_budget(encoder: Encoder) -> None:
    sentences = [f"Sentence number {i} explains the refund window of {i} days in detail." for i in range(120)]
    chunks = chunk_sections([Section(("Refunds",), " ".join(sentences))], counter=encoder, target=120)
    assert len(chunks) > 5
    for chunk in chunks:
        assert encoder.count_tokens(chunk.content) <= 120
        body = chunk.content.split("\n\n", 1)[1]
        assert body.startswith("Sentence number") and body.endswith("detail.")  # whole sentences


def test_a_single_overlong_sentence_is_split(encoder: Encoder) -> None:
    monster = " ".join(f"word{i}" for i in range(2000))
    chunks = chunk_sections([Section(("Big",), monster)], counter=encoder, target=200)
    assert len(chunks) > 5
    assert all(encoder.count_tokens(c.content) <= encoder.max_content_tokens for c in chunks)
    assert all(c.token_count == encoder.count_tokens(c.content) for c in chunks)


def test_target_is_capped_by_the_model_limit(encoder: Encoder) -> None:
    text = " ".join(f"Line {i} about max_connections and E{i}." for i in range(400))
    chunks = chunk_sections([Section(("Limits",), text)], counter=encoder, target=10_000)
    assert max(c.token_count for c in chunks) <= encoder.max_content_tokens == 254


class NonAdditiveCounter:
    """A tokenizer whose joined text costs more than its parts: packing by sums would overflow."""

    max_content_tokens = 50

    def count_tokens(self, text: str) -> int:
        return len(text.split()) * 2

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]  # lies: half the real cost

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        offsets, position = [], 0
        for word in text.split():
            start = text.index(word, position)
            offsets += [(start, start + len(word))] * 2
            position = start + len(word)
        return offsets


def test_final_pass_enforces_the_limit_even_when_counts_are_not_additive() -> None:
    counter = NonAdditiveCounter()
    drafts = [ChunkDraft("H", "H\n\n" + " ".join(f"w{i}" for i in range(60)), None, -1)]

    class Honest(NonAdditiveCounter):
        def count_batch(self, texts: Sequence[str]) -> list[int]:
            return [self.count_tokens(t) for t in texts]

    fixed = enforce_limit(drafts, counter=Honest(), limit=50)
    assert len(fixed) > 1 and all(Honest().count_tokens(d.content) <= 50 for d in fixed)
    assert counter.count_tokens(drafts[0].content) > 50  # the input really was over


def test_split_units_keeps_lines_and_sentences() -> None:
    units = split_units("First line.\nA long line that goes on. And continues here with more words to pass eighty chars.")
    assert [u for _, u in units][0] == "First line."
    assert len(units) == 3
