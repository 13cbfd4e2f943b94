"""The bundled model run by PyTorch through sentence-transformers: the reference every export is checked against."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class TorchBackend:
    name = "torch"

    def __init__(self, model_path: Path) -> None:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # a weights bar on every start is noise
        model = SentenceTransformer(str(model_path), device="cpu")
        if model.max_seq_length is None:
            raise ValueError(f"{model_path}: the model declares no maximum sequence length")
        self.model: Any = model
        self.max_seq_length = int(model.max_seq_length)
        self.hf_tokenizer = self.model.tokenizer

    @property
    def dimension(self) -> int:
        return int(self.model.get_embedding_dimension())

    def embed(self, texts: Sequence[str], *, batch_size: int, progress: bool = False,
              bulk: bool = False) -> np.ndarray:
        vectors = self.model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=progress)
        return np.asarray(vectors, dtype=np.float32)

    def embed_with_states(self, texts: Sequence[str], *, batch_size: int, progress: bool = False,
                          bulk: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """The vectors and, from the same forward pass, each text's token states (no padding)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), []
        outputs = self.model.encode(list(texts), output_value=None, batch_size=batch_size, convert_to_numpy=False,
                                    show_progress_bar=progress)
        vectors = np.stack([np.asarray(o["sentence_embedding"].cpu().numpy(), dtype=np.float32) for o in outputs])
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        states = [np.asarray(o["token_embeddings"][: int(o["attention_mask"].sum())].cpu().numpy(), dtype=np.float32)
                  for o in outputs]
        return vectors, states

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]:
        # One call: sentence-transformers batches and length-sorts the texts itself.
        encoded = self.model.encode(list(texts), output_value="token_embeddings", convert_to_numpy=False,
                                    batch_size=max(len(texts), 1), show_progress_bar=False)
        return [np.asarray(t.cpu().numpy() if hasattr(t, "cpu") else t, dtype=np.float32) for t in encoded]
