from __future__ import annotations

import pytest

from corpus.encoders.embedding import Encoder, get_encoder


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    return get_encoder()


@pytest.fixture(scope="session")
def other_encoder(encoder: Encoder) -> Encoder:
    """An encoder of the same model on another backend than the configured one."""
    from corpus.encoders.embedding import model_path
    from corpus.encoders import load_backend

    backend = load_backend("onnx-int8" if encoder.backend.name == "torch" else "torch", model_path())
    return Encoder(backend=backend, name=encoder.name, dimension=encoder.dimension)
