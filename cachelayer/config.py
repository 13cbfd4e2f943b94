"""How the answer cache matches and keeps entries, as one frozen value passed to lookup() and store()."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class CacheConfig:
    semantic_min_similarity: float  # a near-duplicate question's cosine that serves the entry
    ttl_seconds: int
    # Part of the key: an answer built from another number of chunks is another entry.
    context_chunks: int

    @classmethod
    def from_settings(cls) -> CacheConfig:
        return cls(semantic_min_similarity=settings.CACHE_SEMANTIC_MIN_SIMILARITY,
                   ttl_seconds=settings.CACHE_TTL_SECONDS, context_chunks=settings.ANSWER_CONTEXT_CHUNKS)
