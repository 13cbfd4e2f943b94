"""Texts encoded alone, each run once per answer (docs/decisions/0130).

An answer encodes its question for the vector leg, the reranker's token match, the sentence
scores and the passage's token match, and the citation check encodes the sentences the
answerer has just scored. A text run on its own (one a batch) gives the same vector and token
states every time, because the int8 encoder quantises a batch by that batch's own range; so
inside `remembered_passes()` each such text is run once and its result handed back after.
Texts batched together are never remembered: their results depend on their batch-mates.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

Pass = tuple[np.ndarray, np.ndarray]  # the pooled vector and the token states of one text

_remembered: ContextVar[dict[tuple[str, str], Pass] | None] = ContextVar("encoder_passes", default=None)


@contextmanager
def remembered_passes() -> Iterator[None]:
    """Within it, a text each encoder runs alone is run once. Nothing outlives the block: an
    answer's texts are not kept for the next one."""
    token = _remembered.set({})
    try:
        yield
    finally:
        _remembered.reset(token)


def run_alone(backend: Any, identity: str, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Each text's vector and token states, each text a batch of its own."""
    memo = _remembered.get()
    if memo is None:
        vectors, states = backend.embed_with_states(list(texts), batch_size=1)
        return vectors, list(states)
    missing = [t for t in dict.fromkeys(texts) if (identity, t) not in memo]
    if missing:
        vectors, states = backend.embed_with_states(missing, batch_size=1)
        for text, vector, state in zip(missing, vectors, states):
            memo[(identity, text)] = (vector, state)
    found = [memo[(identity, t)] for t in texts]
    return np.stack([vector for vector, _ in found]), [state for _, state in found]
