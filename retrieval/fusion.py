"""Reciprocal rank fusion: a pure function over ranked id lists.

score(d) = Σ_legs w / (k + rank_leg(d)), k = 60. Ranks only: the legs' raw scores live on
incompatible scales (an unbounded BM25 and a bounded cosine). With 20-candidate legs and
equal weights, a chunk found by both legs always outranks one found by one leg at rank 1:
2/(60+20) = 0.025 > 1/(60+1) ≈ 0.0164.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Fused:
    chunk_id: int
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # leg → 1-based rank

    @property
    def leg_count(self) -> int:
        return len(self.ranks)

    @property
    def best_rank(self) -> int:
        return min(self.ranks.values())

    def sort_key(self) -> tuple[float, int, int, int]:
        # Total and deterministic: score, then agreement, then best rank, then id.
        return (-self.score, -self.leg_count, self.best_rank, self.chunk_id)


def reciprocal_rank_fusion(
    legs: Mapping[str, Sequence[int]], *, k: int = 60, weights: Mapping[str, float] | None = None
) -> list[Fused]:
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for leg, ids in legs.items():
        weight = 1.0 if weights is None else weights.get(leg, 1.0)
        seen: set[int] = set()
        for position, chunk_id in enumerate(ids, start=1):
            if chunk_id in seen:
                continue  # a leg votes once per chunk, at its best rank
            seen.add(chunk_id)
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + position)
            ranks.setdefault(chunk_id, {})[leg] = position
    fused = [Fused(chunk_id=c, score=s, ranks=ranks[c]) for c, s in scores.items()]
    return sorted(fused, key=Fused.sort_key)
