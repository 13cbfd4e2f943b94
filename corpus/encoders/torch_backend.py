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
        self.model: Any = SentenceTransformer(str(model_path), device="cpu")
        self.max_seq_length = int(self.model.max_seq_length)
        self.hf_tokenizer = self.model.tokenizer

    @property
    def dimension(self) -> int:
        return int(self.model.get_embedding_dimension())

    def embed(self, texts: Sequence[str], *, batch_size: int, progress: bool = False) -> np.ndarray:
        vectors = self.model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=progress)
        return np.asarray(vectors, dtype=np.float32)

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]:
        # One call: sentence-transformers batches and length-sorts the texts itself.
        encoded = self.model.encode(list(texts), output_value="token_embeddings", convert_to_numpy=False,
                                    batch_size=max(len(texts), 1), show_progress_bar=False)
        return [np.asarray(t.cpu().numpy() if hasattr(t, "cpu") else t, dtype=np.float32) for t in encoded]
