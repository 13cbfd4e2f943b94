"""A chunk's token states as stored for the late-interaction reranker (docs/decisions/0063, 0065).

The ingest's forward pass already computes every word piece's state before pooling them into
the chunk's vector; keeping them spares the reranker encoding 20 candidates per question (about
0.5 s of the 0.85 s search p95 on the manual). Each state is scaled to unit length, because
MaxSim compares cosines, then quantised.

Two formats, told apart by their first bytes:
- `int4` (written since 0065): MAGIC, then a float16 scale per row, then the rows' components
  as signed 4-bit levels (-7..7, stored +8) two to a byte, row-major. A row costs
  2 + dimension / 2 bytes, about 28 kB per chunk of the manual.
- `int8` (0063; still read, and written with INGEST_TOKEN_STATES_BITS=8): `tokens x dimension`
  int8 values (x 127), row-major, no header; the row count follows from the length.
Both hold every word piece's row, specials included and padding not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from config.stageclock import stage

if TYPE_CHECKING:
    from corpus.encoders.embedding import Encoder

_SCALE = 127.0
# No int8 blob can start with these four bytes: they would be the first four components of a
# unit vector times 127 (0.51, 0.54, 0.65, 0.41), whose squares already sum past 1.
MAGIC = b"ADS4"
_INT4_TOP = 7


class TokenStatesCorrupt(ValueError):
    """A stored blob that is not whole rows of the encoder's dimension in either format."""


def _unit(states: np.ndarray) -> np.ndarray:
    matrix = np.asarray(states, dtype=np.float32)
    if matrix.ndim != 2 or not matrix.shape[0]:
        raise ValueError(f"token states must be a non-empty tokens x dimension matrix, got shape {matrix.shape}")
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)


def pack(states: np.ndarray, *, bits: int) -> bytes:
    """`bits`: 4 or 8 (IngestConfig.token_states_bits)."""
    unit = _unit(states)
    if bits == 8:
        return np.rint(unit * _SCALE).astype(np.int8).tobytes()
    if bits != 4:
        raise ValueError(f"token states are stored in 4 or 8 bits, not {bits}")
    if unit.shape[1] % 2:
        raise ValueError(f"int4 token states need an even dimension, got {unit.shape[1]}")
    scale = np.maximum(np.abs(unit).max(axis=1, keepdims=True), 1e-9) / _INT4_TOP
    scale16 = scale.astype(np.float16)
    levels = np.clip(np.rint(unit / scale16.astype(np.float32)), -_INT4_TOP, _INT4_TOP).astype(np.int16) + 8
    nibbles = (levels[:, 0::2] << 4 | levels[:, 1::2]).astype(np.uint8)
    return MAGIC + scale16.tobytes() + nibbles.tobytes()


def unpack(blob: bytes | memoryview, dimension: int) -> np.ndarray:
    """The stored rows as float32, each of (very nearly) unit length, in either format."""
    data = bytes(blob)
    if data[: len(MAGIC)] == MAGIC:
        body = len(data) - len(MAGIC)
        row_bytes = 2 + dimension // 2
        if not body or body % row_bytes or dimension % 2:
            raise TokenStatesCorrupt(f"{body} bytes after the int4 header are not whole rows of {dimension}")
        rows = body // row_bytes
        scales = np.frombuffer(data, dtype=np.float16, count=rows, offset=len(MAGIC)).astype(np.float32)
        packed = np.frombuffer(data, dtype=np.uint8, offset=len(MAGIC) + 2 * rows).reshape(rows, dimension // 2)
        levels = np.empty((rows, dimension), dtype=np.float32)
        levels[:, 0::2] = (packed >> 4).astype(np.float32) - 8
        levels[:, 1::2] = (packed & 0x0F).astype(np.float32) - 8
        return levels * scales[:, None]
    raw = np.frombuffer(data, dtype=np.int8)
    if not raw.size or raw.size % dimension:
        raise TokenStatesCorrupt(f"{raw.size} stored values are not whole rows of {dimension}")
    return raw.reshape(-1, dimension).astype(np.float32) * (1.0 / _SCALE)


def encode_for_storage(encoder: Encoder, texts: Sequence[str], *, plain: Sequence[bool], keep: bool,
                       bits: int) -> tuple[np.ndarray, list[bytes | None]]:
    """The vectors of `texts` and, when `keep`, the states packed in `bits` of each text `plain`
    marks: one embedded without a context blurb, so that its states are those of the content
    alone, which is what the reranker reads. An encoder without token states keeps none."""
    if not keep or not any(plain) or not encoder.has_token_states:
        return encoder.encode(texts, bulk=True), [None] * len(texts)
    vectors, states = encoder.encode_with_states(texts, bulk=True)
    with stage("pack states"):
        return vectors, [pack(s, bits=bits) if stored else None for s, stored in zip(states, plain)]
