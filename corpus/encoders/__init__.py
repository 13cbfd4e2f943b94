"""The encoder: the one per process (embedding.py), its runtimes, the token states it stores.

embedding.py        the process's Encoder (get_encoder), its identity and vector literals
token_states.py     a chunk's token states packed for the late-interaction reranker
torch_backend.py, onnx_backend.py, export.py   the runtimes, chosen by EMBEDDING_BACKEND

`torch` runs the bundled sentence-transformers model as it is; `onnx` and `onnx-int8` run an
ONNX export of the same weights (export.py makes and checks it). Every backend returns
unit-length mean-pooled vectors and per-token embeddings; product code outside this package
encodes only through embedding.py's Encoder. It imports nothing of the project but settings and
config.stageclock (an ingest's run times its tokenize, encode, pool and pack stages).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

BACKENDS = ("torch", "onnx", "onnx-int8")


class Backend(Protocol):
    name: str
    max_seq_length: int
    hf_tokenizer: Any  # the transformers tokenizer; corpus.encoders.embedding copies its Rust core to count

    @property
    def dimension(self) -> int: ...

    # bulk: many texts for throughput (an ingest, a re-encode) rather than a few for latency; a
    # backend may run them differently, never with other results.
    def embed(self, texts: Sequence[str], *, batch_size: int, progress: bool = False,
              bulk: bool = False) -> np.ndarray: ...

    def embed_with_states(self, texts: Sequence[str], *, batch_size: int, progress: bool = False,
                          bulk: bool = False) -> tuple[np.ndarray, list[np.ndarray]]: ...

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]: ...


def load_backend(name: str, model_path: Path) -> Backend:
    if name == "torch":
        from corpus.encoders.torch_backend import TorchBackend

        return TorchBackend(model_path)
    if name in ("onnx", "onnx-int8"):
        from corpus.encoders.export import ensure_export
        from corpus.encoders.onnx_backend import OnnxBackend

        directory = ensure_export(backend=name, model_path=model_path)
        return OnnxBackend(directory, name=name)
    raise ValueError(f"unknown embedding backend {name!r}; known: {', '.join(BACKENDS)}")
