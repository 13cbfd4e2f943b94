"""An ONNX export of the bundled model run by ONNX Runtime: the same tokenizer, mean pooling and
normalisation as sentence-transformers, so the vectors agree with PyTorch's (export.py checks it)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm


class OnnxBackend:
    def __init__(self, directory: Path, *, name: str) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        self.name = name
        self.hf_tokenizer: Any = AutoTokenizer.from_pretrained(str(directory))
        config = json.loads((directory / "sentence_bert_config.json").read_text())
        self.max_seq_length = int(config["max_seq_length"])
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(directory / "model.onnx"), options,
                                            providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self.session.get_inputs()}

    @property
    def dimension(self) -> int:
        return int(self.embed(["dimension"], batch_size=1).shape[1])

    def _forward(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Token states and the attention mask of one padded batch."""
        encoded = self.hf_tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_seq_length,
                                    return_tensors="np")
        feed = {name: encoded[name].astype(np.int64) for name in self._inputs}
        hidden = self.session.run(None, feed)[0]
        return np.asarray(hidden, dtype=np.float32), encoded["attention_mask"]

    def _batches(self, texts: Sequence[str], batch_size: int) -> Iterator[np.ndarray]:
        # Longest first, as sentence-transformers does: a batch pads to its longest text.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for start in range(0, len(order), batch_size):
            yield order[start:start + batch_size]

    def embed(self, texts: Sequence[str], *, batch_size: int, progress: bool = False) -> np.ndarray:
        vectors: np.ndarray | None = None
        bar = tqdm(total=len(texts), unit="text", disable=not progress)
        for index in self._batches(texts, batch_size):
            hidden, mask = self._forward([texts[i] for i in index])
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            if vectors is None:
                vectors = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            vectors[index] = pooled
            bar.update(len(index))
        bar.close()
        return vectors if vectors is not None else np.zeros((0, 0), dtype=np.float32)

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each text's token states without padding, all texts in one session run."""
        if not texts:
            return []
        hidden, mask = self._forward(texts)
        return [hidden[i, : int(mask[i].sum())] for i in range(len(texts))]
