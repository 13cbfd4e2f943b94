"""A chunk's token states as stored for the late-interaction reranker (docs/decisions/0063).

The ingest's forward pass already computes every word piece's state before pooling them into
the chunk's vector; keeping them spares the reranker encoding 20 candidates per question (about
0.5 s of the 0.85 s search p95 on the manual). Each state is scaled to unit length, because
MaxSim compares cosines, and rounded to int8 (x 127): a component's error is at most 1/254,
and a row costs `dimension` bytes, about 55 kB per chunk of the manual.

Format: `tokens x dimension` int8 values, row-major, specials included and padding not; the
row count follows from the length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings

if TYPE_CHECKING:
    from corpus.embedding import Encoder

_SCALE = 127.0


class TokenStatesCorrupt(ValueError):
    """A stored blob whose length is not a whole number of rows of the encoder's dimension."""


def pack(states: np.ndarray) -> bytes:
    matrix = np.asarray(states, dtype=np.float32)
    if matrix.ndim != 2 or not matrix.shape[0]:
        raise ValueError(f"token states must be a non-empty tokens x dimension matrix, got shape {matrix.shape}")
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    return np.rint(unit * _SCALE).astype(np.int8).tobytes()


def unpack(blob: bytes | memoryview, dimension: int) -> np.ndarray:
    """The stored rows as float32, each of (very nearly) unit length."""
    raw = np.frombuffer(blob, dtype=np.int8)
    if not raw.size or raw.size % dimension:
        raise TokenStatesCorrupt(f"{raw.size} stored values are not whole rows of {dimension}")
    return raw.reshape(-1, dimension).astype(np.float32) * (1.0 / _SCALE)


def encode_for_storage(encoder: Encoder, texts: Sequence[str], *,
                       plain: Sequence[bool]) -> tuple[np.ndarray, list[bytes | None]]:
    """The vectors of `texts` and, with INGEST_TOKEN_STATES on, the packed states of each text
    `plain` marks: one embedded without a context blurb, so that its states are those of the
    content alone, which is what the reranker reads."""
    if not settings.INGEST_TOKEN_STATES or not any(plain):
        return encoder.encode(texts), [None] * len(texts)
    vectors, states = encoder.encode_with_states(texts)
    return vectors, [pack(s) if keep else None for s, keep in zip(states, plain)]
