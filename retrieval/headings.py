"""The heading leg: the question against each section's heading path, as a third ranked list.

A question asked in the asker's own words ("one row per customer, the newest one") often
names what a section heading names ("DISTINCT Clause") more directly than the section's body
does: a body vector averages over every sentence of the chunk, a heading is the author's own
label for the topic. Each visible chunk's heading path is encoded once per scope and process
(the unique paths only: about 6,000 on the PostgreSQL manual, 2 s with the int8 encoder) and
kept in memory; the leg ranks the paths by cosine and nominates the first chunk of each.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import numpy as np
from psycopg import sql

from corpus.embedding import get_encoder
from retrieval.fusion import reciprocal_rank_fusion
from retrieval.legs import LegHit, vector_leg
from tenants.scope import ChunkQuery, TenantScope


@dataclass(frozen=True)
class HeadingIndex:
    chunk_count: int
    vectors: np.ndarray  # one unit row per unique heading path
    first_chunk: np.ndarray  # the lowest chunk id under each path


_CACHE: dict[tuple[int, tuple[int, ...], str], HeadingIndex] = {}
_LOCK = threading.Lock()


def heading_index(scope: TenantScope, *, chunk_count: int) -> HeadingIndex:
    """The scope's heading vectors, rebuilt when its visible chunk count has moved."""
    encoder = get_encoder()
    key = (scope.tenant_id, tuple(sorted(scope.audience_ids)), encoder.identity)
    with _LOCK:
        index = _CACHE.get(key)
        if index is not None and index.chunk_count == chunk_count:
            return index
        # Index: corpus_chunk_tenant_doc_idx finds the scope's rows; one pass; the scope groups by chunk, so paths are grouped here.
        rows = scope.fetch(ChunkQuery(
            select=sql.SQL("c.id AS first_id, c.heading_path"),
            where=sql.SQL("c.heading_path <> ''"),
        ))
        first: dict[str, int] = {}
        for row in rows:
            path = row["heading_path"]
            first[path] = min(first.get(path, row["first_id"]), row["first_id"])
        paths = sorted(first)
        vectors = encoder.encode(paths) if paths else np.zeros((0, 384), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms == 0, 1, norms)
        index = HeadingIndex(chunk_count=chunk_count, vectors=vectors.astype(np.float32),
                             first_chunk=np.array([first[p] for p in paths], dtype=np.int64))
        _CACHE[key] = index
        return index


def heading_leg(scope: TenantScope, query_vector: np.ndarray, *, limit: int, chunk_count: int) -> list[LegHit]:
    index = heading_index(scope, chunk_count=chunk_count)
    if not len(index.first_chunk):
        return []
    q = query_vector / (np.linalg.norm(query_vector) or 1.0)
    scores = index.vectors @ q.astype(np.float32)
    top = np.argsort(-scores, kind="stable")[:limit]
    return [LegHit(int(index.first_chunk[i]), float(scores[i])) for i in top]


_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Z\"'(])")


def question_sentences(query: str, *, min_words: int = 4) -> list[str]:
    """The sentences of a question of several, each long enough to say something alone."""
    parts = [p.strip() for p in _SENTENCE.split(query.strip())]
    parts = [p for p in parts if len(p.split()) >= min_words]
    return parts if len(parts) >= 2 else []


def sentence_leg(scope: TenantScope, query: str, *, limit: int, visible: int) -> list[int]:
    """Each sentence of a long question searched alone, the lists fused: the sentence that asks
    ("Is there an index for that?") is not drowned by the ones that set the scene."""
    sentences = question_sentences(query)
    if not sentences:
        return []
    vectors = get_encoder().encode(sentences)
    lists = {f"s{i}": [h.chunk_id for h in vector_leg(scope, v, limit=limit, visible=visible)]
             for i, v in enumerate(vectors)}
    return [f.chunk_id for f in reciprocal_rank_fusion(lists, k=60)][:limit]
