"""What a question may contain before it reaches SQL, the encoder and the trace."""

from __future__ import annotations

import unicodedata

_KEEP = {"\n", "\t"}


def clean_query(text: str) -> str:
    """Control characters become spaces (PostgreSQL refuses NUL in text, and none of them carry
    meaning in a question); lone surrogates, which cannot be stored as UTF-8, are dropped."""
    out = []
    for ch in text:
        category = unicodedata.category(ch)
        if category == "Cs":
            continue
        out.append(" " if category == "Cc" and ch not in _KEEP else ch)
    return "".join(out)
