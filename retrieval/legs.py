"""The two retrieval legs, both as fragments handed to the tenant scope.

Vector: cosine distance over the HNSW index with pgvector 0.8 iterative scans, so a tenant
that owns 1% of the table still gets its k rows (a plain HNSW scan filters after the index
and can return 3 of 10). Keyword: Okapi BM25 computed inside PostgreSQL from the chunk's
tsvector (term frequencies, length) and the statistics kept at ingest (document frequency,
N, average length) over the asker's visible chunks only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from django.db import connection
from psycopg import sql

from corpus.encoders.embedding import vector_literal as vector_text
from corpus.language.keys import WeightedKey, question_keys, scheme_for
from corpus.language.terms import exact_terms
from retrieval.querytext import clean_query, written_names, written_words
from tenants.scope import ChunkQuery, TenantScope


@dataclass(frozen=True)
class LegHit:
    chunk_id: int
    score: float


@dataclass(frozen=True)
class QueryTerms:
    lexemes: tuple[str, ...]  # stemmed with the tenant's text search configuration
    exact: tuple[str, ...]  # whole identifiers, `=`-prefixed
    # A language keyed in Python (corpus/language/keys.py): each question word's candidate keys,
    # narrowed by select_keys to those the asker's chunks hold, and each key's weight.
    groups: tuple[tuple[WeightedKey, ...], ...] = ()
    weights: Mapping[str, float] = field(default_factory=dict)

    @property
    def all(self) -> tuple[str, ...]:
        return self.lexemes + self.exact


def query_terms(text: str, *, ts_config: str, language: str = "en") -> QueryTerms:
    """Lexemes exactly as ingest produced them: the same parser, stemmer and stop words."""
    # No tenant data is read here: to_tsvector over the question only.
    text = clean_query(text)
    if scheme_for(language) != "simple":
        groups = tuple(tuple(group) for group in question_keys(text, language=language))
        keys = tuple(dict.fromkeys(k.key for group in groups for k in group))
        return QueryTerms(lexemes=keys, exact=tuple(exact_terms(text)), groups=groups)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT u.lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) AS u ORDER BY u.positions[1]",
            [ts_config, text],
        )
        lexemes = tuple(dict.fromkeys(row[0] for row in cursor.fetchall()))
    return QueryTerms(lexemes=lexemes, exact=tuple(exact_terms(text)))


def name_lexemes(text: str, *, ts_config: str, language: str = "en") -> frozenset[str]:
    """The lexemes of the question's words written as names (retrieval.querytext.written_names);
    for a language keyed in Python, their lemma keys (`Německa` → `německo`)."""
    text = clean_query(text)
    names = written_names(text)
    if scheme_for(language) != "simple":
        return frozenset(group[0].key for group in question_keys(" ".join(names), language=language))
    if not names:
        return frozenset()
    with connection.cursor() as cursor:  # no tenant data: to_tsvector over the names only
        cursor.execute("SELECT u.lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) AS u",
                       [ts_config, " ".join(names)])
        return frozenset(row[0] for row in cursor.fetchall())


def written_lexemes(text: str, *, ts_config: str) -> dict[str, str]:
    """Each lexeme of the question → the word it was written as, lower case (`databasecach` →
    `databasecache`): what the vocabulary's identifiers hold is the word, not its stem."""
    written = [word.lower() for word in written_words(clean_query(text))]
    if not written:
        return {}
    with connection.cursor() as cursor:  # no tenant data: to_tsvector over the question's words
        cursor.execute("SELECT w, u.lexeme FROM unnest(%s::text[]) AS w,"
                       " unnest(to_tsvector(%s::regconfig, w)) AS u", [written, ts_config])
        return {lexeme: word for word, lexeme in cursor.fetchall()}


# Measured on the 110k-row bench table (2 cores, warm, vectors stored inline: retrieval
# migration 0002): an exact scan costs ~1.9 µs per visible chunk (read, distance; it was 4.5
# with the vector in TOAST); an HNSW scan ~9 µs per index tuple it visits, and to keep
# `limit` rows of a scope that owns share s of the table it visits ~limit / s of them.
EXACT_US_PER_ROW = 1.9
HNSW_US_PER_VISIT = 9.0
VECTOR_PATHS = ("auto", "exact", "hnsw")


def choose_vector_path(*, visible: int, table_rows: int, limit: int, ef_search: int) -> str:
    """Exact scan or HNSW, by the cost model above, never by the planner's row estimate.

    Under row-level security the planner multiplies the scope's audience filter with the
    policy's own and estimates a tenant at 1/10-1/50 of its rows, so it picks the exact scan
    for tenants where HNSW is 10x cheaper (a 15k-chunk tenant: 29 ms against 3 ms).
    """
    if visible <= 0:
        return "exact"
    visits = max(ef_search, limit * max(table_rows, visible) / visible)
    return "exact" if EXACT_US_PER_ROW * visible <= HNSW_US_PER_VISIT * visits else "hnsw"


def vector_leg(scope: TenantScope, query_vector: np.ndarray, *, limit: int, visible: int | None = None,
               path: str = "auto", ef_search: int) -> list[LegHit]:
    """`ef_search`: pgvector's HNSW search breadth (RetrievalConfig.hnsw_ef_search)."""
    if path not in VECTOR_PATHS:
        raise ValueError(f"vector path {path!r} is not one of {', '.join(VECTOR_PATHS)}")
    if path == "auto":
        if visible is None:
            visible = scope.corpus_totals()[0]
        path = choose_vector_path(visible=visible, table_rows=scope.table_rows(), limit=limit, ef_search=ef_search)
    if path == "exact":
        # Index: corpus_chunk_tenant_doc_idx (bitmap) finds the scope's rows; every one is compared.
        local_settings = {"enable_indexscan": "off"}
    else:
        # Index: corpus_chunk_embedding_hnsw, scanned iteratively until `limit` rows pass the scope.
        # No sort may replace the index order, and no tie-break column may force one.
        local_settings = {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": str(ef_search),
                          "enable_sort": "off"}
    query = ChunkQuery(
        select=sql.SQL("c.id, 1 - (c.embedding <=> %(v)s::vector) AS similarity"),
        order_by=sql.SQL("c.embedding <=> %(v)s::vector"),
        limit=limit,
        params={"v": vector_text(query_vector)},
        local_settings=local_settings,
    )
    rows = scope.fetch(query)
    # relaxed_order may return neighbours slightly out of order, and equal distances have no
    # order at all: sort by the true distance, then the id, so runs are deterministic.
    rows.sort(key=lambda r: (-r["similarity"], r["id"]))
    return [LegHit(r["id"], float(r["similarity"])) for r in rows]


@dataclass(frozen=True)
class Bm25Stats:
    idf: dict[str, float]
    df: dict[str, int]
    chunk_count: int
    avg_length: float


def bm25_stats(scope: TenantScope, terms: Sequence[str], weights: Mapping[str, float] | None = None) -> Bm25Stats:
    df = scope.document_frequencies(list(terms))
    n, total = scope.corpus_totals()
    avg = total / n if n else 1.0
    # Robertson–Spärck Jones IDF with +1 inside the log, so it never goes negative.
    idf = {t: math.log(1 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms}
    if weights:  # a half-weight key (folded, prefix) counts half in BM25, coverage and evidence
        idf = {t: value * weights.get(t, 1.0) for t, value in idf.items()}
    return Bm25Stats(idf=idf, df=df, chunk_count=n, avg_length=avg)


def select_keys(terms: QueryTerms, df: Mapping[str, int]) -> QueryTerms:
    """Each question word keeps the keys the asker's chunks hold; a word none of whose keys
    occurs keeps them all, so the gate's coverage misses it with the same weight a found word
    counts with (its lemma alone weighed a third of a found word, and `koně` in a question the
    shop cannot answer no longer kept the coverage down)."""
    chosen: dict[str, float] = {}
    for group in terms.groups:
        held = [k for k in group if df.get(k.key, 0) > 0] or list(group)
        for weighted in held:
            chosen[weighted.key] = max(chosen.get(weighted.key, 0.0), weighted.weight)
    return QueryTerms(lexemes=tuple(chosen), exact=terms.exact, groups=terms.groups, weights=chosen)


# The chunk's tsvector restricted to the query's terms (positions kept, for term frequency).
_ONLY_TERMS = "ts_delete(c.tsv, tsvector_to_array(ts_delete(c.tsv, %(terms)s::text[])))"


def only_terms_sql(terms_param: str = "terms") -> str:
    """SQL text for the chunk's tsvector restricted to the lexemes in %(<terms_param>)s."""
    return _ONLY_TERMS.replace("%(terms)s", f"%({terms_param})s")


# Okapi BM25's usual constants (docs/decisions/0008).
BM25_K1 = 1.2
BM25_B = 0.75
# The rarest query terms nominate candidates while their document frequencies add up to at most
# this many chunks; every term scores them (nomination_query, docs/decisions/0028).
BM25_NOMINATION_BUDGET = 1500

# BM25's length normalisation of this chunk: k1 · (1 − b + b · |d| / avgdl).
_NORM = "%(k1)s * (1 - %(b)s + %(b)s * c.term_count / %(avgdl)s)"

# Okapi BM25 of one candidate, summed over the query's terms it contains.
# Stemmed lexemes: setweight marks the query's lexemes 'A' and ts_filter keeps only them with
# their positions (two linear passes in C; ingest never sets weights, so nothing else is 'A').
# That replaced ts_delete of the ~80 other lexemes, which cost 5 µs a candidate.
# Exact identifiers are positionless in the tsvector (array_to_tsvector), where ts_filter would
# drop them: their term frequency is 1, their presence is the chunk's own exact_terms column.
_BM25_SCORE = (
    "coalesce((SELECT sum((%(lexeme_idfs)s::float8[])[array_position(%(lexemes)s::text[], u.lexeme)]"
    " * array_length(u.positions, 1) * (%(k1)s + 1) / (array_length(u.positions, 1) + " + _NORM + "))"
    " FROM unnest(ts_filter(setweight(c.tsv, 'A', %(lexemes)s::text[]), '{a}')) AS u), 0)"
    " + coalesce((SELECT sum(e.idf) FROM unnest(%(exact)s::text[], %(exact_idfs)s::float8[]) AS e(term, idf)"
    " WHERE e.term = ANY(c.exact_terms)), 0) * (%(k1)s + 1) / (1 + " + _NORM + ")"
)


def _quote(term: str) -> str:
    # Quoted lexemes are taken verbatim by the ::tsquery cast: no second stemming.
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def nomination_query(terms: Sequence[str], df: dict[str, int], *, budget: int, chunks: int) -> str:
    """The tsquery whose matches become candidates: the rarest terms up to a budget of chunks,
    and the chunks that hold the two rarest of the remaining (common) terms together.

    Every query term scores every candidate, but only these nominate: a term in a fifth of a
    26k-chunk tenant would otherwise drag 5,000 chunks through scoring (70 ms) for a top 40.
    The pair keeps a question made of common words answerable ("insert a row … update it
    instead": `insert` & `updat` finds the ON CONFLICT section, which no rare term names).
    The hole, named: a chunk holding a single common query term and no rare one is never a
    keyword candidate; the vector leg is what finds such chunks.
    """
    ordered = sorted(terms, key=lambda t: (df.get(t, 0), t))
    nominating: list[str] = []
    total = 0
    for term in ordered:
        if total + df.get(term, 0) > budget:
            break
        nominating.append(term)
        total += df.get(term, 0)
    parts = [_quote(t) for t in nominating]
    common = ordered[len(nominating):]
    # The pair nominates only when, were the two independent, it would fit the budget too:
    # `the` & `to` hold together in most chunks and would undo the budget.
    if len(common) >= 2 and df.get(common[0], 0) * df.get(common[1], 0) <= budget * max(chunks, 1):
        parts.append(f"({_quote(common[0])} & {_quote(common[1])})")
    if not parts:
        # Every term is over budget: the chunks that hold the rarest terms together, as many
        # as it takes for their expected co-occurrence to fit the budget.
        together, expected = [ordered[0]], float(df.get(ordered[0], 0))
        for term in ordered[1:]:
            if expected <= budget:
                break
            together.append(term)
            expected *= df.get(term, 0) / max(chunks, 1)
        parts.append(" & ".join(_quote(t) for t in together))
    return " | ".join(parts)


def keyword_leg(scope: TenantScope, terms: Sequence[str], stats: Bm25Stats, *, limit: int) -> list[LegHit]:
    present = [t for t in terms if stats.df.get(t, 0) > 0]
    if not present:
        return []
    lexemes = [t for t in present if not t.startswith("=")]
    exact = [t for t in present if t.startswith("=")]
    params = {
        "tsq": nomination_query(present, stats.df, budget=BM25_NOMINATION_BUDGET, chunks=stats.chunk_count),
        "k1": BM25_K1,
        "b": BM25_B,
        "avgdl": stats.avg_length,
        "lexemes": lexemes, "lexeme_idfs": [stats.idf[t] for t in lexemes],
        "exact": exact, "exact_idfs": [stats.idf[t] for t in exact],
    }
    query = ChunkQuery(
        select=sql.SQL("c.id, " + _BM25_SCORE + " AS score"),
        # Index: corpus_chunk_tsv_idx (GIN) finds the candidates; scoring reads their tsvector.
        where=sql.SQL("c.tsv @@ %(tsq)s::tsquery"),
        order_by=sql.SQL("score DESC, c.id"),
        limit=limit,
        params=params,
    )
    return [LegHit(r["id"], float(r["score"])) for r in scope.fetch(query)]
