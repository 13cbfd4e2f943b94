"""A local cross-encoder (sentence-transformers CrossEncoder) loaded from a configured path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from retrieval.rerankers import RerankScore, score_from_logit


class CrossEncoderReranker:
    name = "cross_encoder"
    reads_token_states = False  # it reads (query, text) pairs

    def __init__(self, path: str | None = None) -> None:
        path = path or settings.RETRIEVAL_CROSS_ENCODER_PATH
        if not path:
            raise ImproperlyConfigured("RETRIEVAL_CROSS_ENCODER_PATH is not set: no local cross-encoder to load")
        from sentence_transformers import CrossEncoder

        self.model: Any = CrossEncoder(path, device="cpu")

    def score(self, query: str, texts: Sequence[str], *,
              token_states: Sequence[np.ndarray | None] = ()) -> list[RerankScore]:
        if not texts:
            return []
        import torch

        # Identity activation: we want the raw logit, and take the sigmoid ourselves.
        logits = self.model.predict([(query, t) for t in texts], activation_fn=torch.nn.Identity(),
                                    convert_to_numpy=True, show_progress_bar=False)
        return [score_from_logit(float(x)) for x in logits.reshape(-1)]
