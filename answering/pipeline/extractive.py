"""The offline answerer: quote the best-supported sentences of the retrieved chunks, cited.

It needs no model provider, so it is what `make run` and the test suite use out of the box.
It never paraphrases, so it cannot invent a fact; it declines when no sentence is similar
enough to the question. Retrieved text is data: a sentence that addresses the assistant
("ignore previous instructions…") is never quoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from answering.pipeline.drafts import Draft
from corpus.embedding import get_encoder
from corpus.terms import exact_terms
from retrieval.search import Candidate

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])|\n+")
_INSTRUCTION = re.compile(
    r"\b(ignore|disregard|forget)\b.{0,40}\b(instructions?|rules|prompt|above)\b|\byou are now\b|\bsystem prompt\b"
    r"|\b(assistant|chatbot|ai|bot)\b.{0,30}\b(must|should|will)\b.{0,20}\b(say|reply|respond|answer)\b",
    re.IGNORECASE,
)
_MIN_CHARS = 25


@dataclass(frozen=True)
class _Sentence:
    text: str
    candidate: Candidate


def _body(candidate: Candidate) -> str:
    prefix = f"{candidate.heading_path}\n\n"
    return candidate.content[len(prefix):] if candidate.content.startswith(prefix) else candidate.content


def split_sentences(text: str) -> list[str]:
    return [s.strip(" -•\t") for s in _SENTENCE.split(text) if len(s.strip()) >= _MIN_CHARS]


_WORD = re.compile(r"[a-z0-9]{4,}")
_STOP = {"what", "which", "when", "where", "does", "with", "that", "this", "have", "from", "your", "about", "there",
         "many", "much", "long", "should", "would", "could"}


def lexical_bonus(question: str, sentence: str) -> float:
    """Cosine alone prefers fluent paraphrase; the sentence that holds the exact identifier or
    the question's own words is usually the answer. Identifiers weigh most."""
    lowered = sentence.lower()
    identifiers = [t[1:] for t in exact_terms(question)]
    if any(identifier in lowered for identifier in identifiers):
        return 0.3
    words = {w[:5] for w in _WORD.findall(question.lower()) if w not in _STOP}
    if not words:
        return 0.0
    present = sum(1 for w in words if w in lowered)
    return 0.1 * present / len(words)


def looks_like_instruction(sentence: str) -> bool:
    return bool(_INSTRUCTION.search(sentence))


def extract_answer(question: str, candidates: list[Candidate]) -> Draft:
    context = candidates[: settings.ANSWER_CONTEXT_CHUNKS]
    sentences = [_Sentence(s, c) for c in context for s in split_sentences(_body(c)) if not looks_like_instruction(s)]
    identifiers = [t[1:] for t in exact_terms(question)]
    naming = [s for s in sentences if any(i in s.text.lower() for i in identifiers)]
    if naming:
        # A question about E1043 is answered by sentences that name E1043, not by E1042's.
        sentences = naming
    if not sentences:
        return Draft.declined_by("extractive", "no quotable sentence in the retrieved chunks")
    # One encoder call for the question and every candidate sentence.
    vectors = get_encoder().encode([question, *[s.text for s in sentences]])
    similarity = vectors[1:] @ vectors[0] + np.array([lexical_bonus(question, s.text) for s in sentences])
    order = np.argsort(-similarity, kind="stable")
    minimum = settings.ANSWER_EXTRACTIVE_MIN_SIMILARITY
    if float(similarity[order[0]]) < minimum:
        return Draft.declined_by("extractive", f"best sentence similarity {float(similarity[order[0]]):.2f} < {minimum}")
    scored = [(sentences[i], float(similarity[i])) for i in order]
    contested_docs = {s.candidate.document_id for s, score in scored if s.candidate.contested and score >= minimum}
    if contested_docs and len({s.candidate.document_id for s, _ in scored if s.candidate.contested}) >= 2:
        # Sources disagree: the best sentence of each contested document, newest first.
        best: dict[int, _Sentence] = {}
        for sentence, _ in scored:
            if sentence.candidate.contested and sentence.candidate.document_id not in best:
                best[sentence.candidate.document_id] = sentence
        return _conflict_answer(list(best.values())[:3])
    picked: list[_Sentence] = []
    per_chunk: dict[int, int] = {}
    for sentence, score in scored:
        if score < minimum or len(picked) >= settings.ANSWER_EXTRACTIVE_SENTENCES:
            break
        if per_chunk.get(sentence.candidate.chunk_id, 0) >= 2 or any(p.text == sentence.text for p in picked):
            continue
        per_chunk[sentence.candidate.chunk_id] = per_chunk.get(sentence.candidate.chunk_id, 0) + 1
        picked.append(sentence)
    cited = list(dict.fromkeys(p.candidate.chunk_id for p in picked))
    text = " ".join(f"{p.text} [{p.candidate.chunk_id}]" for p in picked)
    return Draft(text=text, cited_chunk_ids=cited, generator="extractive")


def _conflict_answer(picked: list[_Sentence]) -> Draft:
    """Sources disagree: prefer the newest effective date, and say so."""

    def when(s: _Sentence) -> str:
        return s.candidate.effective_date.isoformat() if s.candidate.effective_date else "0000-00-00"

    ordered = sorted(picked, key=lambda s: (when(s), s.candidate.document_id), reverse=True)
    newest = ordered[0]
    date = newest.candidate.effective_date.isoformat() if newest.candidate.effective_date else "the newest source"
    lines = [f"Our sources disagree on this. The most recent one ({newest.candidate.title}, {date}) says: "
             f"{newest.text} [{newest.candidate.chunk_id}]"]
    for other in ordered[1:]:
        lines.append(f"Another source says: {other.text} [{other.candidate.chunk_id}]")
    cited = list(dict.fromkeys(s.candidate.chunk_id for s in ordered))
    return Draft(text=" ".join(lines), cited_chunk_ids=cited, generator="extractive", conflict=True)
