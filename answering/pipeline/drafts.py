"""What a generator hands back before citations are checked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Draft:
    text: str
    cited_chunk_ids: list[int]
    generator: str
    declined: bool = False
    decline_reason: str = ""
    conflict: bool = False
    provider: str = ""
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    attempts: list[dict[str, object]] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    @classmethod
    def declined_by(cls, generator: str, reason: str, **extra: Any) -> Draft:
        return cls(text="", cited_chunk_ids=[], generator=generator, declined=True, decline_reason=reason, **extra)
