from __future__ import annotations

import pytest

from corpus.embedding import Encoder, get_encoder


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    return get_encoder()
