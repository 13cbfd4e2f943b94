"""An ONNX export of the bundled model run by ONNX Runtime: the same tokenizer, mean pooling and
normalisation as sentence-transformers, so the vectors agree with PyTorch's (export.py checks it)."""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from config.stageclock import stage


class OnnxBackend:
    def __init__(self, directory: Path, *, name: str) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        self.name = name
        self.hf_tokenizer: Any = AutoTokenizer.from_pretrained(str(directory))
        config = json.loads((directory / "sentence_bert_config.json").read_text())
        self.max_seq_length = int(config["max_seq_length"])
        self._model = directory / "model.onnx"
        self.session = self._session(threads=0)
        self._inputs = {i.name for i in self.session.get_inputs()}
        self._bulk: Any = None
        self._bulk_lock = threading.Lock()

    def _session(self, *, threads: int) -> Any:
        """threads=0: ONNX Runtime's default, one intra-op thread per core."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        if threads != 1:
            # A server answers several questions at once: threads that spin between operators
            # take the cores the other requests' encodes and PostgreSQL need (4 clients on the
            # manual: 9.1 answers/s spinning, 12.0 not; one client unchanged; 0128).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(str(self._model), options, providers=["CPUExecutionProvider"])

    def _bulk_session(self) -> Any:
        """A session of one intra-op thread, run from one Python thread per core at once."""
        with self._bulk_lock:
            if self._bulk is None:
                self._bulk = self._session(threads=1)
            return self._bulk

    @property
    def dimension(self) -> int:
        return int(self.embed(["dimension"], batch_size=1).shape[1])

    def _run(self, encoded: Any, session: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Token states and the attention mask of one padded batch."""
        feed = {name: np.asarray(encoded[name], dtype=np.int64) for name in self._inputs}
        hidden = (session or self.session).run(None, feed)[0]
        return np.asarray(hidden, dtype=np.float32), np.asarray(encoded["attention_mask"])

    def _batches(self, encoded: Any, batch_size: int) -> Iterator[tuple[np.ndarray, Any]]:
        # Longest first by word pieces, not characters: a batch pads to its longest text, and
        # character order pads 18% more on manual chunks at 16 a batch (0060).
        ids = encoded["input_ids"]
        order = np.argsort([-len(i) for i in ids], kind="stable")
        for start in range(0, len(order), batch_size):
            index = order[start:start + batch_size]
            rows = {name: [encoded[name][i] for i in index] for name in ("input_ids", "attention_mask",
                                                                       "token_type_ids") if name in encoded}
            yield index, self.hf_tokenizer.pad(rows, padding=True, return_tensors="np")

    def embed(self, texts: Sequence[str], *, batch_size: int, progress: bool = False,
              bulk: bool = False) -> np.ndarray:
        return self._pool(texts, batch_size=batch_size, progress=progress, keep_states=False, bulk=bulk)[0]

    def embed_with_states(self, texts: Sequence[str], *, batch_size: int, progress: bool = False,
                          bulk: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """The vectors and, from the same forward pass, each text's token states (no padding)."""
        return self._pool(texts, batch_size=batch_size, progress=progress, keep_states=True, bulk=bulk)

    def _pool(self, texts: Sequence[str], *, batch_size: int, progress: bool, keep_states: bool,
              bulk: bool) -> tuple[np.ndarray, list[np.ndarray]]:
        vectors: np.ndarray | None = None
        states: list[np.ndarray] = []
        bar = tqdm(total=len(texts), unit="text", disable=not progress)
        with stage("tokenize"):
            encoded = self.hf_tokenizer(list(texts), truncation=True, max_length=self.max_seq_length)
        if keep_states:
            states = [np.zeros((0, 0), dtype=np.float32)] * len(texts)
        for index, hidden, mask in self._forward(encoded, batch_size, bulk=bulk):
            with stage("pool"):
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
                pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
                if vectors is None:
                    vectors = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
                vectors[index] = pooled
                if keep_states:
                    for row, i in enumerate(index):
                        states[i] = hidden[row, : int(mask[row].sum())]
            bar.update(len(index))
        bar.close()
        return (vectors if vectors is not None else np.zeros((0, 0), dtype=np.float32)), states

    def _forward(self, encoded: Any, batch_size: int, *,
                 bulk: bool) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(index, token states, mask) of each batch, in order. In bulk, batches run one per core
        at once on single-threaded sessions: the same batches give the same vectors, and when
        another process takes a core (the ingest's PostgreSQL backend) only that core's batch
        waits, where one batch split over both cores waits for its slower half (0126). A few
        texts for a question keep both cores on one batch: latency, not throughput."""
        batches = list(self._batches(encoded, batch_size))
        workers = min(len(batches), os.cpu_count() or 1) if bulk else 1
        if workers < 2:
            for index, batch in batches:
                with stage("encode"):
                    hidden, mask = self._run(batch)
                yield index, hidden, mask
            return
        session = self._bulk_session()
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="encode") as pool:
            # Two batches a core in flight: the cores never wait for the pooling, and a window's
            # finished token states do not pile up faster than they are pooled.
            queued = iter(batches)
            in_flight: deque[tuple[np.ndarray, Future[tuple[np.ndarray, np.ndarray]]]] = deque(
                (index, pool.submit(self._run, batch, session)) for index, batch in islice(queued, 2 * workers))
            while in_flight:
                index, future = in_flight.popleft()
                with stage("encode"):  # the wait for this batch; the others run meanwhile
                    hidden, mask = future.result()
                for next_index, batch in islice(queued, 1):
                    in_flight.append((next_index, pool.submit(self._run, batch, session)))
                yield index, hidden, mask

    def token_embeddings(self, texts: Sequence[str], *, batch_size: int = 4) -> list[np.ndarray]:
        """Each text's token states without padding, in small batches ordered by word pieces.
        One padded batch of a question and 20 chunks pads them all to the longest; batches of
        4 reranked pgdocs-dev's questions in 341 ms p50 against 427 ms in one batch, 396 ms
        in 8 and 436 ms one by one (0060)."""
        if not texts:
            return []
        encoded = self.hf_tokenizer(list(texts), truncation=True, max_length=self.max_seq_length)
        states: list[np.ndarray] = [np.zeros((0, 0), dtype=np.float32)] * len(texts)
        for index, batch in self._batches(encoded, batch_size):
            hidden, mask = self._run(batch)
            for row, i in enumerate(index):
                states[i] = hidden[row, : int(mask[row].sum())]
        return states
