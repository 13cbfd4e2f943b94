"""The exact, unstemmed key: identifiers kept whole so they match exactly.

PostgreSQL's parser splits `max_connections` into `max` + `connect` and `SKU-77` into `sku` +
`-77`; a customer pasting an error code or a setting name deserves an exact match. Tokens that
carry a digit, an underscore, or inner dots/dashes are kept whole, lower-cased and prefixed
with `=` so they never collide with stemmed lexemes; ingest stores them per chunk, queries
extract them the same way, and both end up in the same tsvector and BM25 statistics.
"""

from __future__ import annotations

import re

EXACT_PREFIX = "="
_IDENTIFIER = re.compile(r"(?<![\w.\-])([A-Za-z0-9][\w.\-]*[A-Za-z0-9])(?![\w\-])")
_MAX_TERMS = 256


def exact_terms(text: str) -> list[str]:
    found: dict[str, None] = {}
    for token in _IDENTIFIER.findall(text):
        # Most tokens are plain words; isalpha() rules them out in C (no digit, _, . or -),
        # where the checks below cost the ingest's writer thread 50 µs of Python per chunk.
        if token.isalpha():
            continue
        if not (any(ch.isdigit() for ch in token) or "_" in token or "." in token or "-" in token):
            continue
        if token.replace(".", "").replace("-", "").isdigit() and len(token) < 3:
            continue  # "5" or "12" alone identify nothing
        found[EXACT_PREFIX + token.lower()] = None
        if len(found) >= _MAX_TERMS:
            break
    return list(found)
