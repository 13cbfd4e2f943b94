"""Citations: keep only what was cited, one source per document, and check each claim.

The check is *similarity*, not entailment: each sentence of the answer is embedded (each on
its own, as the answerer scored it) and compared with the vectors of the chunks it cites, the
ones the ingest stored where they encode the chunk's text alone. It catches a citation that is about something
else; it cannot catch one that says the opposite.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from psycopg import sql

from answering.pipeline.drafts import Draft
from corpus.encoders.embedding import get_encoder
from retrieval.search import Candidate, ChunkRef
from tenants.scope import ChunkQuery, TenantScope

# A citation marker: "[n]", n a document number in the model's reply, a chunk id in a draft, a source number
# in the answer.
MARKER = re.compile(r"\[(\d+)\]")
_CLAIM_SPLIT = re.compile(r"(?<=[.!?])\s+")
# A quoted listing's line (indented, or behind the interpreter's prompt) keeps its spacing; in
# any other line runs of spaces collapse and no space stands before a full stop or comma.
_LISTING_LINE = re.compile(r"^(?:[ \t]|>>> |\.\.\. )")


@dataclass
class Source(ChunkRef):
    """A cited document as clients see it (the API documents it as SourceOut)."""

    number: int
    page: int | None
    snippet: str
    effective_date: str | None
    origin: str = ""  # upload, command, website or escalation; empty in answers cached before it was kept
    url: str = ""  # the page a website source came from, for the reader to follow

    def as_dict(self) -> dict[str, Any]:
        return {"number": self.number, **{k: v for k, v in self.__dict__.items() if k != "number"}}


@dataclass
class ClaimCheck:
    claim: str
    cited_chunk_ids: list[int]
    similarity: float
    weak: bool


@dataclass
class CitedAnswer:
    text: str
    sources: list[Source]
    claims: list[ClaimCheck] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


def _snippet(candidate: Candidate, limit: int = 280) -> str:
    prefix = f"{candidate.heading_path}\n\n"
    body = candidate.content[len(prefix):] if candidate.content.startswith(prefix) else candidate.content
    return body if len(body) <= limit else body[: limit - 1].rsplit(" ", 1)[0] + "…"


def _source(candidate: Candidate, number: int) -> Source:
    return Source(
        number=number, chunk_id=candidate.chunk_id, document_id=candidate.document_id,
        slug=candidate.slug, title=candidate.title, source_type=candidate.source_type,
        heading_path=candidate.heading_path, page=candidate.page, snippet=_snippet(candidate),
        effective_date=candidate.effective_date.isoformat() if candidate.effective_date else None,
        origin=candidate.origin, url=candidate.url,
    )


def context_sources(context: list[Candidate]) -> list[dict[str, Any]]:
    """What the generator will read, one entry per document, shown before any answer text.
    Numbers here are provisional; the final answer's markers refer to `finalize`'s sources,
    matched by chunk_id."""
    seen: set[int] = set()
    out: list[dict[str, Any]] = []
    for candidate in context:
        if candidate.document_id not in seen:
            seen.add(candidate.document_id)
            out.append(_source(candidate, len(out) + 1).as_dict())
    return out


def _tidy(line: str) -> str:
    return re.sub(r"[ \t]+([.,;])", r"\1", re.sub(r"[ \t]{2,}", " ", line))


def finalize(draft: Draft, context: list[Candidate]) -> CitedAnswer:
    """Keep cited chunks that were in the context, one source per document, renumber markers."""
    by_id = {c.chunk_id: c for c in context}
    flags = list(draft.flags)
    sources: list[Source] = []
    number_of_document: dict[int, int] = {}
    number_of_chunk: dict[int, int] = {}
    for chunk_id in draft.cited_chunk_ids:
        candidate = by_id.get(chunk_id)
        if candidate is None:
            flags.append(f"cited chunk {chunk_id} was not in the context: dropped")
            continue
        if candidate.document_id not in number_of_document:
            number_of_document[candidate.document_id] = len(sources) + 1
            sources.append(_source(candidate, len(sources) + 1))
        number_of_chunk[chunk_id] = number_of_document[candidate.document_id]

    def renumber(match: re.Match[str]) -> str:
        number = number_of_chunk.get(int(match.group(1)))
        return f"[{number}]" if number else ""

    text = MARKER.sub(renumber, draft.text)
    text = "\n".join(line if _LISTING_LINE.match(line) else _tidy(line) for line in text.split("\n")).strip()
    if not sources:
        flags.append("no valid citation: the answer carries no sources")
    return CitedAnswer(text=text, sources=sources, flags=flags)


def check_claims_by_similarity(answer: CitedAnswer, context: list[Candidate], *, scope: TenantScope,
                               min_similarity: float) -> list[ClaimCheck]:
    """Similarity of each answer sentence to the chunks it cites; below `min_similarity` to every
    chunk it cites, a claim is weak."""
    if not answer.sources:
        return []
    chunk_of_number = {s.number: s.chunk_id for s in answer.sources}
    content = {c.chunk_id: c.content for c in context}
    claims = []
    for sentence in _CLAIM_SPLIT.split(answer.text):
        numbers = [int(n) for n in MARKER.findall(sentence)]
        claim = MARKER.sub("", sentence).strip()
        if claim:
            cited = [chunk_of_number[n] for n in numbers if n in chunk_of_number] or [s.chunk_id for s in answer.sources]
            claims.append((claim, cited))
    if not claims:
        return []
    cited_ids = list(dict.fromkeys(cid for _, ids in claims for cid in ids))
    chunk_vectors = stored_vectors(scope, cited_ids)
    unstored = [cid for cid in cited_ids if cid not in chunk_vectors]
    # One text a batch, as the answerer scores sentences (0127): a claim's similarity is its own.
    vectors = get_encoder().encode([c for c, _ in claims] + [content[cid] for cid in unstored], batch_size=1)
    claim_vectors = vectors[: len(claims)]
    chunk_vectors.update(zip(unstored, vectors[len(claims):]))
    minimum = min_similarity
    checks = []
    for (claim, ids), vector in zip(claims, claim_vectors):
        similarity = max(float(np.dot(vector, chunk_vectors[cid])) for cid in ids)
        checks.append(ClaimCheck(claim=claim, cited_chunk_ids=ids, similarity=round(similarity, 4),
                                 weak=similarity < minimum))
    return checks


def stored_vectors(scope: TenantScope, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
    """The stored vector of each chunk the current encoder embedded from its text alone: what
    encoding its content again would give, without the answer's longest encoder input (a chunk
    embedded after a context blurb, or by another encoder mid-`reembed`, is encoded again)."""
    # Index: corpus_chunk_pkey.
    rows = scope.fetch(ChunkQuery(
        select=sql.SQL("c.id, c.embedding::text AS embedding"),
        where=sql.SQL("c.id = ANY(%(ids)s) AND c.encoder = %(encoder)s AND c.context_blurb = ''"),
        params={"ids": list(chunk_ids), "encoder": get_encoder().identity},
    ))
    return {int(row["id"]): np.asarray(json.loads(row["embedding"]), dtype=np.float32) for row in rows}
