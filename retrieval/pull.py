"""Whether the question's most distinctive missing word pulls it towards what was found (docs/decisions/0067).

The gate's coverage counts a question word only when an evidence chunk holds its lexeme, so a
paraphrase ("is the sandbox throttled differently?" of a page on rate limits) covers as little
as a question on a topic the pages never treat ("can it translate incoming tickets?"). Here the
question is encoded again without its missing word of highest IDF, and the word's pull is

    best cosine(question, evidence) - best cosine(question without the word, evidence)

A paraphrase pulls the question towards the pages; an absent topic pulls it away from them, or
does nothing. Computed only for a question the coverage rule would escalate: one more encode.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection
from psycopg import sql

from corpus.encoders.embedding import Encoder, get_encoder, vector_literal
from retrieval.search import Candidate, SearchResult, counts_for_coverage
from tenants.scope import ChunkQuery, TenantScope

# ts_debug's aliases for a hyphenated whole: its parts follow it at the same place in the text.
_COMPOUND = ("asciihword", "hword", "numhword")
_SPACES = re.compile(r"\s+")
# More words than this tie for the top IDF (each unseen by the corpus): no paraphrase has that
# many, and each one would cost an encode (a 4,000-character question of invented words).
MAX_TIED = 3


@dataclass(frozen=True)
class LackingPull:
    lexeme: str
    idf: float
    without: str  # the question as encoded without the word
    pull: float


def lacking_word_pull(scope: TenantScope, result: SearchResult, *, ts_config: str,
                      context_chunks: int, encoder: Encoder | None = None) -> LackingPull | None:
    """None when the context holds no evidence or every question word, when the word has no place
    in the question's text (an exact identifier, a keyed language's lemma), or when more than
    MAX_TIED words share the top IDF. `encoder`: the tenant's, which embedded the question;
    none is the configured MiniLM."""
    evidence = [c for c in result.candidates[:context_chunks] if c.evidence != "weak"]
    if not evidence or result.query_vector is None:
        return None
    found = {t for c in evidence for t in c.matched_terms}
    lacking = [t for t in result.terms.lexemes
               if t not in found and result.idf.get(t, 0.0) > 0 and counts_for_coverage(t)]
    if not lacking:
        return None
    spans = lexeme_spans(result.query, ts_config=ts_config)
    for correction in result.corrections:  # a corrected lexeme stands where the typed word did
        spans.setdefault(correction.corrected, spans.get(correction.original, []))
    top = max(result.idf[t] for t in lacking)
    tied = [t for t in lacking if result.idf[t] == top and spans.get(t)]
    if not tied or len(tied) > MAX_TIED:
        return None
    pulls = _pulls(scope, evidence, {t: without_spans(result.query, spans[t]) for t in tied}, top,
                   encoder or get_encoder())
    # Several words tie for the top IDF (both unseen by the corpus): the weakest pull speaks.
    return min(pulls, key=lambda p: p.pull, default=None)


def lexeme_spans(text: str, *, ts_config: str) -> dict[str, list[tuple[int, int]]]:
    """Where in `text` each lexeme's words stand, by PostgreSQL's own parser and stemmer."""
    with connection.cursor() as cursor:  # no tenant data: the question's text only
        cursor.execute("SELECT alias, token, lexemes FROM ts_debug(%s::regconfig, %s)", [ts_config, text])
        rows = cursor.fetchall()
    spans: dict[str, list[tuple[int, int]]] = {}
    at = 0
    for alias, token, lexemes in rows:
        start = text.find(token, at)
        if start < 0:
            continue
        if alias not in _COMPOUND:
            at = start + len(token)
        for lexeme in lexemes or ():
            spans.setdefault(lexeme, []).append((start, start + len(token)))
    return spans


def without_spans(text: str, spans: Sequence[tuple[int, int]]) -> str:
    kept, at = [], 0
    for start, end in sorted(spans):
        kept.append(text[at:start])
        at = max(at, end)
    kept.append(text[at:])
    return _SPACES.sub(" ", "".join(kept)).strip()


def _pulls(scope: TenantScope, evidence: list[Candidate], without: dict[str, str], idf: float,
           encoder: Encoder) -> list[LackingPull]:
    texts = {lexeme: text for lexeme, text in without.items() if text}
    if not texts:
        return []
    vectors = encoder.encode_queries(list(texts.values()))  # one encoder call for the tied words
    best = max(c.vector_similarity for c in evidence)
    pulls = []
    for (lexeme, text), vector in zip(texts.items(), vectors):
        # Index: corpus_chunk_pkey (a handful of ids).
        rows = scope.fetch(ChunkQuery(
            select=sql.SQL("c.id, 1 - (c.embedding <=> %(v)s::vector) AS similarity"),
            where=sql.SQL("c.id = ANY(%(ids)s)"),
            params={"v": vector_literal(vector), "ids": [c.chunk_id for c in evidence]},
        ))
        if rows:
            pulls.append(LackingPull(lexeme=lexeme, idf=idf, without=text,
                                     pull=best - max(float(encoder.scale(float(r["similarity"]))) for r in rows)))
    return pulls
