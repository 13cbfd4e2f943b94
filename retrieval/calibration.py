"""What a cosine means in this corpus: the similarity a question has to a chunk by chance.

A cosine of 0.33 is a match in the PostgreSQL manual and background noise in a narrow help
centre whose every page talks about the same product; an absolute floor fitted on one corpus
does not transfer (docs/decisions/0042). Each scope gets its own chance level, measured on the
corpus itself: a seeded sample of its section headings, asked as questions, against a seeded
sample of the chunks of other documents. The mean of those cosines is what an unrelated chunk
scores; evidence is read as the margin above it.

Computed lazily on a scope's first search and kept per process, keyed by the scope; an
ingest that moves the visible chunk count by more than STALE_SHARE rebuilds it. Both samples
are drawn by a seeded hash of the chunk text, so every process, and every install of the same
documents, computes the same number. Cost: a hash of every visible chunk, one read of
CHUNK_SAMPLE vectors and one encoder call over PSEUDO_QUERIES headings (0.3-1.2 s once;
bench/results/calibration-spread-0066.json).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
from psycopg import sql

from corpus.encoders.embedding import Encoder, get_encoder
from tenants.scope import ChunkQuery, TenantScope

PSEUDO_QUERIES = 256
CHUNK_SAMPLE = 1024
STALE_SHARE = 0.1
# What chance is before a scope has said anything: the level this encoder measured on four
# real corpora (the PostgreSQL manual 0.086, the Django docs 0.091, helpwise 0.078, paylane
# 0.089; docs/decisions/0042). A scope's own pairs pull its level away from it as they add up,
# PRIOR_PAIRS pairs weighing as much as the prior. A new tenant with two or three pages on one
# topic measures the topic, not chance; weighted this way it cannot escalate every question
# (nor, with no pair at all, fall back to a floor on the raw cosine).
PRIOR_CHANCE = 0.086
PRIOR_PAIRS = 100


@dataclass(frozen=True)
class Calibration:
    chunk_count: int
    chance: float  # mean cosine of a heading-as-question with a random chunk of the scope
    spread: float  # their standard deviation, for traces and --explain
    pairs: int

    def fresh_for(self, chunk_count: int) -> bool:
        return abs(self.chunk_count - chunk_count) <= STALE_SHARE * max(self.chunk_count, 1)


_CACHE: dict[tuple[int, tuple[int, ...], str], Calibration] = {}
_LOCK = threading.Lock()


def calibration_for(scope: TenantScope, *, chunk_count: int, encoder: Encoder | None = None) -> Calibration:
    """`encoder`: the scope's tenant's (encoder_for its language); none is the configured MiniLM.
    Keyed by it too: `reembed` changes what a cosine means without moving the chunk count."""
    encoder = encoder or get_encoder()
    key = (scope.tenant_id, tuple(sorted(scope.audience_ids)), encoder.identity)
    cached = _CACHE.get(key)
    if cached is not None and cached.fresh_for(chunk_count):
        return cached
    with _LOCK:  # one build per scope, not one per concurrent request
        cached = _CACHE.get(key)
        if cached is None or not cached.fresh_for(chunk_count):
            cached = _CACHE[key] = build(scope, chunk_count=chunk_count, encoder=encoder)
    return cached


def _sample(scope: TenantScope, columns: str, limit: int, *, salt: str) -> list[dict[str, Any]]:
    return scope.fetch(ChunkQuery(
        select=sql.SQL(columns),
        # Ordered by a seeded hash of the text, not of ids: the same corpus draws the same
        # sample in every process, tenant and install, where ids are numbered by load order
        # (docs/decisions/0066). random() would differ per call. A full pass over the scope's
        # rows, once per process and scope; the id only breaks ties between identical chunks.
        order_by=sql.SQL("md5(%(seed)s || c.content), c.id"),
        limit=limit,
        params={"seed": salt},
    ))


@dataclass(frozen=True)
class Draw:
    """Which sample: the sizes, and a seed (bench/calibration_spread.py draws several)."""
    questions: int
    chunks: int
    seed: str = ""


def _headings(scope: TenantScope, draw: Draw) -> list[tuple[str, int]]:
    rows = _sample(scope, "c.heading_path, c.document_id", draw.questions * 4, salt=f"questions{draw.seed}")
    leaves: dict[str, int] = {}
    for row in rows:
        leaf = str(row["heading_path"]).split(" > ")[-1].strip()
        if leaf and leaf not in leaves:
            leaves[leaf] = int(row["document_id"])
    return list(leaves.items())[:draw.questions]


def _vectors(scope: TenantScope, draw: Draw) -> tuple[np.ndarray, np.ndarray]:
    # Another salt: the questions' own chunks would otherwise be in the sample they are scored on.
    rows = _sample(scope, "c.document_id, c.embedding::text AS embedding", draw.chunks, salt=f"chunks{draw.seed}")
    if not rows:
        return np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=np.int64)
    matrix = np.array([np.array(str(r["embedding"]).strip("[]").split(","), dtype=np.float32) for r in rows])
    documents = np.array([int(r["document_id"]) for r in rows], dtype=np.int64)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9), documents


def build(scope: TenantScope, *, chunk_count: int, draw: Draw | None = None,
          encoder: Encoder | None = None) -> Calibration:
    draw = draw or Draw(questions=PSEUDO_QUERIES, chunks=CHUNK_SAMPLE)
    headings, (chunks, documents) = _headings(scope, draw), _vectors(scope, draw)
    if not headings or not len(chunks):
        return Calibration(chunk_count=chunk_count, chance=PRIOR_CHANCE, spread=0.0, pairs=0)
    encoder = encoder or get_encoder()
    # The headings are asked: a query side where the encoder has one.
    cosines = encoder.scale(encoder.encode_queries([text for text, _ in headings]) @ chunks.T)
    # Only pairs across documents: a heading scored against its own page is a match, not chance.
    unrelated = np.array([doc for _, doc in headings])[:, None] != documents[None, :]
    values = cosines[unrelated]
    if not values.size:
        return Calibration(chunk_count=chunk_count, chance=PRIOR_CHANCE, spread=0.0, pairs=0)
    chance = (float(values.sum()) + PRIOR_PAIRS * PRIOR_CHANCE) / (values.size + PRIOR_PAIRS)
    return Calibration(chunk_count=chunk_count, chance=chance, spread=float(values.std()), pairs=int(values.size))
