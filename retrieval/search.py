"""Hybrid search: vector + BM25 → reciprocal rank fusion → calibrated evidence → rerank → rare-literal pin.

Every read goes through the TenantScope; nothing is filtered by tenant or audience in
Python. The result carries each stage's numbers and timings so traces and `manage.py search
--explain` show why a chunk was (or was not) returned.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from concurrent.futures import Future, ThreadPoolExecutor
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from psycopg import sql

from corpus.encoders.embedding import CosineScale, encoder_for, encoder_reads, token_states_for
from corpus.language.diacritics import restore_diacritics
from corpus.ingest.origin import source_url
from retrieval.config import RetrievalConfig
from retrieval.calibration import calibration_for
from retrieval.fusion import Fused, reciprocal_rank_fusion
from retrieval.legs import (
    Bm25Stats, QueryTerms, bm25_stats, keyword_leg, name_lexemes, only_terms_sql, query_terms, select_keys,
    vector_leg, vector_text, written_lexemes,
)
from retrieval.querytext import is_when_word
from retrieval.releases import release_notes_not_first
from retrieval.rerankers import get_reranker
from retrieval.rerankers.stored import stored_token_states
from retrieval.typos import Correction, coined_words, correct_terms, is_misspelt, resolve_dotted_parts
from tenants.scope import ChunkQuery, TenantScope

# hybrid is the product's search; each leg alone is a diagnostic (`manage.py search --mode`, the
# `vector` and `keyword` eval arms), and the keyword leg alone is how a language the encoder does
# not read is searched (mode_for_language).
MODES = ("hybrid", "vector", "keyword")
# Keyword evidence: the chunk holds at least this IDF-weighted share of the question's terms.
KEYWORD_COVERAGE_MIN = 0.4
# A quoted identifier that at most this many visible chunks hold pins them (docs/decisions/0059).
LITERAL_PIN_MAX_DF = 10


@dataclass
class ChunkRef:
    """Which chunk of which document: what a candidate and the source that cites it share."""

    chunk_id: int
    document_id: int
    slug: str
    title: str
    source_type: str
    heading_path: str


@dataclass
class Candidate(ChunkRef):
    content: str
    page: int | None
    version: str
    effective_date: dt.date | None
    contested: bool
    fused_score: float
    ranks: dict[str, int]
    vector_similarity: float
    keyword_coverage: float
    matched_terms: list[str]
    evidence: str = ""  # keyword | vector | keyword+vector | weak
    vector_margin: float = 0.0  # cosine above the scope's chance level (retrieval.calibration)
    rerank_logit: float | None = None
    rerank_probability: float | None = None
    origin: str = ""  # how the document arrived (corpus.models.Document.Origin)
    url: str = ""  # a website page's address (corpus.ingest.origin.source_url), else empty
    pinned: bool = False  # moved up for a rare quoted literal (docs/decisions/0059)

    @property
    def score(self) -> float:
        """The number the confidence gate reads: the reranker's sigmoid if it ran, else fusion."""
        return self.rerank_probability if self.rerank_probability is not None else self.fused_score

    @property
    def score_kind(self) -> str:
        return "rerank" if self.rerank_probability is not None else "fusion"

    def as_trace(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id, "document_id": self.document_id, "slug": self.slug,
            "source_type": self.source_type, "heading_path": self.heading_path, "ranks": self.ranks,
            "fused_score": round(self.fused_score, 6), "vector_similarity": round(self.vector_similarity, 4),
            "keyword_coverage": round(self.keyword_coverage, 4), "evidence": self.evidence,
            "vector_margin": round(self.vector_margin, 4),
            "rerank_logit": self.rerank_logit, "rerank_probability": self.rerank_probability,
            "score_kind": self.score_kind, "pinned": self.pinned,
        }


@dataclass
class SearchResult:
    query: str
    mode: str
    terms: QueryTerms
    corrections: list[Correction]
    candidates: list[Candidate]  # best first
    timings_ms: dict[str, float] = field(default_factory=dict)
    reranked: bool = False
    rerank_reason: str = "off"
    rerank_encoded: int = 0  # candidates the reranker encoded because no token states were stored
    query_vector: np.ndarray | None = None
    # IDF-weighted share of the question's terms found in the context chunks that carry
    # evidence: a question whose distinctive words the corpus never uses is not answerable
    # from it, and a chunk with no evidence of its own does not make up for them.
    query_coverage: float = 0.0
    # The scope's chance cosine and the best cosine of any fused candidate: the gate's floor
    # reads the margin between them when no reranker scored the candidates.
    chance: float = 0.0
    best_similarity: float = 0.0
    # Words written as names (`Flask`, `GraphQL`) that no visible chunk contains, as lexemes:
    # the question is about something this corpus does not know (docs/decisions/0051).
    unknown_names: tuple[str, ...] = ()
    idf: dict[str, float] = field(default_factory=dict)  # of the question's terms, in this scope
    # The question with its misspelt words replaced by their corrections: what the vector leg,
    # the reranker and the offline answerer read (a typo's embedding is noise, 0099).
    corrected_query: str = ""

    @property
    def vector_margin(self) -> float:
        return self.best_similarity - self.chance

    def as_trace(self) -> dict[str, Any]:
        return {
            "query": self.query, "corrected_query": self.corrected_query, "mode": self.mode,
            "lexemes": list(self.terms.lexemes),
            "exact_terms": list(self.terms.exact),
            "corrections": [c.__dict__ for c in self.corrections],
            "candidates": [c.as_trace() for c in self.candidates],
            "timings_ms": self.timings_ms, "reranked": self.reranked, "rerank_reason": self.rerank_reason,
            "rerank_encoded": self.rerank_encoded,
            "query_coverage": round(self.query_coverage, 4), "chance": round(self.chance, 4),
            "vector_margin": round(self.vector_margin, 4), "unknown_names": list(self.unknown_names),
        }


class _Timer:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    def stage(self, name: str) -> "_Stage":
        return _Stage(self, name)


class _Stage:
    def __init__(self, timer: _Timer, name: str) -> None:
        self.timer, self.name = timer, name

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.timer.timings[self.name] = round((time.perf_counter() - self.start) * 1000, 2)


_EMBED_POOL: ThreadPoolExecutor | None = None


def _embedder() -> ThreadPoolExecutor:
    global _EMBED_POOL
    if _EMBED_POOL is None:
        # Several, so concurrent requests do not queue behind one another's encoding.
        _EMBED_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="query-embed")
    return _EMBED_POOL


def search(
    *,
    scope: TenantScope,
    query: str,
    ts_config: str,
    k: int = 10,
    mode: str | None = None,
    rerank: str | None = None,
    query_vector: np.ndarray | None = None,
    language: str = "en",
    config: RetrievalConfig | None = None,
) -> SearchResult:
    """`config`: what the surface built (answering.pipeline.config); a direct caller that passes
    none (a test, a bench script) searches as settings say. `mode` and `rerank` override the
    language's choice for one call (`manage.py search --mode/--rerank`, the diagnostic arms)."""
    config = config or RetrievalConfig.from_settings()
    mode = mode or mode_for_language(language)
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    timer = _Timer()
    # The encoder (torch, GIL released) works in a thread while this one waits on PostgreSQL
    # for the keyword side; "embed" is then only the part of encoding that was not hidden.
    encoder = encoder_for(language)
    pending = _embedder().submit(encoder.encode_query, query) if query_vector is None else None
    with timer.stage("terms"):
        terms, stats, corrections, unknown_names, corrected = _query_terms(scope, query, ts_config, language)
    if corrected != query:
        pending, query_vector = _embedder().submit(encoder.encode_query, corrected), None
    legs, query_vector = _run_legs(scope, terms, stats, mode=mode, timer=timer, pending=pending,
                                   query_vector=query_vector, config=config)
    with timer.stage("fuse"):
        fused = reciprocal_rank_fusion(legs)
    with timer.stage("calibrate"):  # ~0 ms once a scope's chance level is known (retrieval.calibration)
        chance = calibration_for(scope, chunk_count=stats.chunk_count, encoder=encoder).chance
    with timer.stage("evidence"):
        candidates = _hydrate(scope, fused, query_vector, terms, stats, encoder.scale)
        weigh_evidence(candidates, chance=chance, stats=stats, min_vector_margin=config.min_vector_margin)
    result = SearchResult(query=query, mode=mode, terms=terms, corrections=corrections, candidates=candidates,
                          query_vector=query_vector, chance=chance,
                          best_similarity=max((c.vector_similarity for c in candidates), default=-1.0),
                          unknown_names=unknown_names, idf=dict(stats.idf), corrected_query=corrected)
    with timer.stage("rerank"):
        _maybe_rerank(scope, result, rerank or rerank_for_language(language, config), config)
    result.candidates = pin_rare_literals(result.candidates, terms, stats, LITERAL_PIN_MAX_DF)
    result.candidates = diversify(result.candidates, config.max_chunks_per_document)
    result.candidates = release_notes_not_first(result.candidates, question=query)
    result.candidates = result.candidates[:k]
    context = result.candidates[: config.context_chunks]
    result.query_coverage = query_coverage([c for c in context if c.evidence != "weak"], terms, stats)
    result.timings_ms = timer.timings
    result.timings_ms["total"] = round(sum(timer.timings.values()), 2)
    return result


def mode_for_language(language: str) -> str:
    """`hybrid`, except in a language the encoder was not trained on: the keyword leg alone, since
    an English model's nearest neighbours of a Czech question are noise that fusion ranks above
    keyword hits (docs/decisions/0062)."""
    return "hybrid" if encoder_reads(language) else "keyword"


def rerank_for_language(language: str, config: RetrievalConfig) -> str:
    """The configured rerank mode, or none in a language the MiniLM was not trained on: on
    demo-tlapka the English reranker took the right page out of first place in 24 questions and
    put it there in 10 (docs/decisions/0062), and the multilingual encoder gives no token states
    to rerank with (0112)."""
    return config.rerank_mode if encoder_reads(language) and token_states_for(language) else "off"


def _query_terms(scope: TenantScope, query: str, ts_config: str,
                 language: str = "en") -> tuple[QueryTerms, Bm25Stats, list[Correction], tuple[str, ...], str]:
    """The terms, their statistics, typo corrections, the unknown names, and the question with
    its typos corrected (and, typed without diacritics in a language that has them, with its
    diacritics restored: docs/decisions/0114)."""
    query = restore_diacritics(query, language=language, lemma_frequency=scope.document_frequencies,
                               terms_matching=scope.terms_matching)
    terms = query_terms(query, ts_config=ts_config, language=language)
    stats = bm25_stats(scope, terms.all)
    keyed = bool(terms.groups)
    if keyed:  # Python-computed keys (corpus/language/keys.py): keep each word's keys that occur
        terms = select_keys(terms, stats.df)
    parts: list[Correction] = []
    unknown = [t for t in terms.lexemes if not stats.df.get(t)]
    names = name_lexemes(query, ts_config=ts_config, language=language) if unknown else frozenset()
    written = written_lexemes(query, ts_config=ts_config) if unknown and not keyed else {}
    if unknown and not keyed:
        lexemes, parts = resolve_dotted_parts(scope, terms.lexemes, stats.df, written=written)
        if parts:
            terms = QueryTerms(lexemes=lexemes, exact=terms.exact, groups=terms.groups)
            stats = bm25_stats(scope, terms.all)
    lexemes, typos = correct_terms(scope, terms.lexemes, stats.df, names=names, written=written, language=language)
    if typos:
        weights = {t: terms.weights.get(t, 1.0) for t in lexemes} if keyed else {}
        terms = QueryTerms(lexemes=lexemes, exact=terms.exact, groups=terms.groups, weights=weights)
        stats = bm25_stats(scope, terms.all, terms.weights)
    if keyed and not typos:
        stats = bm25_stats(scope, terms.all, terms.weights)
    resolved = {part.original for part in parts}
    named = tuple(t for t in unknown if t in names and t not in resolved)
    if written:
        named += coined_words(terms.lexemes, stats.df, written=written, language=language, names=names)
    misspelt = [t for t in typos if is_misspelt(written.get(t.original), language)]
    return terms, stats, parts + typos, named, corrected_text(query, misspelt, written)


def corrected_text(query: str, typos: Sequence[Correction], written: dict[str, str]) -> str:
    """`query` with each misspelt word written as its correction (`how lnog do refnuds take` →
    `how long do refund take`): the stem the vocabulary holds reads closer to the intent than the
    typo, for the encoder as for a reader of the trace. Only words no dictionary knows are
    rewritten: `sell` corrected to the pages' `seller` is a keyword the pages hold, but the
    question still says `sell` (paylane-a003 answered when its vector read "seller")."""
    for typo in typos:
        word = written.get(typo.original)
        if word:
            query = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", typo.corrected, query, flags=re.IGNORECASE)
    return query


def _run_legs(scope: TenantScope, terms: QueryTerms, stats: Bm25Stats, *, mode: str, timer: _Timer,
              pending: Future[np.ndarray] | None, query_vector: np.ndarray | None,
              config: RetrievalConfig) -> tuple[dict[str, list[int]], np.ndarray]:
    per_leg = config.candidates_per_leg
    legs: dict[str, list[int]] = {}
    if mode in ("hybrid", "keyword"):
        with timer.stage("keyword"):
            legs["keyword"] = [h.chunk_id for h in keyword_leg(scope, terms.all, stats, limit=per_leg)]
    with timer.stage("embed"):
        if pending is not None:
            query_vector = pending.result()
    assert query_vector is not None
    if mode in ("hybrid", "vector"):
        with timer.stage("vector"):
            legs["vector"] = [h.chunk_id for h in vector_leg(scope, query_vector, limit=per_leg,
                                                            visible=stats.chunk_count,
                                                            ef_search=config.hnsw_ef_search)]
    return legs, query_vector


def _hydrate(scope: TenantScope, fused: list[Fused], query_vector: np.ndarray, terms: QueryTerms,
             stats: Bm25Stats, scale: CosineScale) -> list[Candidate]:
    if not fused:
        return []
    rows = scope.fetch(ChunkQuery(
        select=sql.SQL(
            "c.id, c.document_id, c.heading_path, c.content, c.page, c.contested, d.slug, d.title, d.source_type,"
            " d.version, d.effective_date, d.origin, d.origin_ref, 1 - (c.embedding <=> %(v)s::vector) AS similarity,"
            " tsvector_to_array(" + only_terms_sql() + ") AS matched"
        ),
        # Index: corpus_chunk_pkey. With nested loops the planner, trusting its too-low row
        # estimate under row-level security, walked every document of the tenant (20 ms at
        # 15k chunks); a hash join on the ~80 chunks read by primary key takes 4 ms.
        where=sql.SQL("c.id = ANY(%(ids)s)"),
        params={"v": vector_text(query_vector), "terms": list(terms.all), "ids": [f.chunk_id for f in fused]},
        with_document=True,
        local_settings={"enable_nestloop": "off"},
    ))
    by_id = {row["id"]: row for row in rows}
    total_idf = sum(stats.idf.get(t, 0.0) for t in terms.all) or 1.0
    candidates = []
    for item in fused:
        row = by_id[item.chunk_id]
        matched = sorted(row["matched"])
        candidates.append(Candidate(
            chunk_id=row["id"], document_id=row["document_id"], slug=row["slug"], title=row["title"],
            source_type=row["source_type"], heading_path=row["heading_path"], content=row["content"],
            page=row["page"], version=row["version"], effective_date=row["effective_date"],
            contested=row["contested"], fused_score=item.score, ranks=dict(item.ranks),
            vector_similarity=float(scale(float(row["similarity"]))),
            keyword_coverage=sum(stats.idf.get(t, 0.0) for t in matched) / total_idf, matched_terms=matched,
            origin=row["origin"], url=source_url(origin=row["origin"], ref=row["origin_ref"]),
        ))
    return candidates


def counts_for_coverage(term: str) -> bool:
    """The one rule for which question words a page is expected to hold: the coverage here and
    the missing word's pull (retrieval.pull) both read it. A word dating the asker's incident
    does not count (0068)."""
    return not is_when_word(term)


def query_coverage(candidates: Sequence[Candidate], terms: QueryTerms, stats: Bm25Stats) -> float:
    counted = [t for t in terms.all if counts_for_coverage(t)]
    total = sum(stats.idf.get(t, 0.0) for t in counted)
    if not total:
        return 0.0
    found = {t for c in candidates for t in c.matched_terms} & set(counted)
    return sum(stats.idf.get(t, 0.0) for t in found) / total


def weigh_evidence(candidates: Sequence[Candidate], *, chance: float, stats: Bm25Stats,
                   min_vector_margin: float) -> None:
    """Label each candidate's evidence, calibrated to the scope; drop none (docs/decisions/0042).

    Vector evidence: a cosine at least `min_vector_margin` above the scope's chance
    level. Keyword evidence: the chunk holds a term rare in this scope (IDF at least half of
    what an absent term gets) and KEYWORD_COVERAGE_MIN of the question's IDF mass,
    so `id`, `insert` and `row` never count on their own. An absolute cosine floor and a
    share rule alone dropped the best semantic match of paraphrased questions on corpora
    they were not tuned on; ranking now keeps every candidate. The labels decide which
    context chunks count toward the gate's question coverage.
    """
    rare = math.log(2 * stats.chunk_count + 2) / 2
    for candidate in candidates:
        candidate.vector_margin = candidate.vector_similarity - chance
        keyword = (candidate.keyword_coverage >= KEYWORD_COVERAGE_MIN
                   and any(stats.idf.get(t, 0.0) >= rare for t in candidate.matched_terms))
        reasons = [name for name, held in (
            ("keyword", keyword), ("vector", candidate.vector_margin >= min_vector_margin)) if held]
        candidate.evidence = "+".join(reasons) or "weak"


def diversify(candidates: list[Candidate], per_document: int) -> list[Candidate]:
    """At most `per_document` chunks of one document before every other document has had its
    turn: five chunks of one wrong page crowd out the right page (the rest keep their order)."""
    if per_document <= 0:
        return candidates
    head: list[Candidate] = []
    tail: list[Candidate] = []
    seen: dict[int, int] = {}
    for candidate in candidates:
        count = seen.get(candidate.document_id, 0)
        (head if count < per_document else tail).append(candidate)
        seen[candidate.document_id] = count + 1
    return head + tail


def pin_rare_literals(candidates: list[Candidate], terms: QueryTerms, stats: Bm25Stats,
                      max_df: int) -> list[Candidate]:
    """Chunks holding an identifier the question quotes (`23505`, `work_mem`) that at most
    `max_df` visible chunks hold, and closer to the question than the scope's chance cosine,
    move to just below the first candidate.

    Neither the vector leg nor a semantic reranker reads an error code: the one table row that
    defines it fuses low (keyword leg only) and reranks lower (docs/decisions/0059). The first
    candidate stays where the scorer put it, so the gate still reads the score it was fitted on.
    """
    rare = {t for t in terms.exact if _is_literal(t) and 0 < stats.df.get(t, 0) <= max_df} if max_df > 0 else set()
    if not rare or len(candidates) < 2:
        return candidates
    first, rest = candidates[0], candidates[1:]
    # A chunk no closer to the question than a random one of the scope holds the literal by
    # coincidence (`7000` as a distance in a GeoDjango example, asked about a port).
    held = {c.chunk_id for c in rest if rare.intersection(c.matched_terms) and c.vector_margin > 0}
    if not held:
        return candidates
    for c in rest:
        c.pinned = c.chunk_id in held  # the trace says which chunks the pin moved, not just the order
    return [first, *(c for c in rest if c.chunk_id in held), *(c for c in rest if c.chunk_id not in held)]


def _is_literal(term: str) -> bool:
    """A code or a name (`=23505`, `=work_mem`, `=os.path.join`), not a hyphenated word of
    prose (`=built-in`, `=full-text`), which corpus.language.terms also keeps whole."""
    return any(ch.isdigit() or ch in "_." for ch in term)


RERANK_MODES = ("always", "off")


def should_rerank(candidates: Sequence[Candidate], mode: str) -> tuple[bool, str]:
    if mode not in RERANK_MODES:
        raise ValueError(f"rerank mode {mode!r} is not always or off")
    if mode == "off" or len(candidates) < 2:
        return False, "off" if mode == "off" else "too few candidates"
    return True, "always"


def _maybe_rerank(scope: TenantScope, result: SearchResult, mode: str, config: RetrievalConfig) -> None:
    run, reason = should_rerank(result.candidates, mode)
    result.rerank_reason = reason
    if not run:
        return
    depth = config.rerank_depth
    head, tail = result.candidates[:depth], result.candidates[depth:]
    reranker = get_reranker(config.reranker)
    states = stored_token_states(scope, [c.chunk_id for c in head]) if reranker.reads_token_states else []
    result.rerank_encoded = sum(s is None for s in states) if states else len(head)
    scores = reranker.score(result.corrected_query or result.query, [c.content for c in head], token_states=states)
    for candidate, score in zip(head, scores):
        candidate.rerank_logit, candidate.rerank_probability = score.logit, score.probability
    # By logit: the sigmoid saturates. Fusion's order folded in lost at @5 (docs/decisions/0072).
    result.candidates = sorted(head, key=lambda c: (-(c.rerank_logit or 0.0), c.chunk_id)) + tail
    result.reranked = True


def multi_query_search(
    *, scope: TenantScope, query: str, ts_config: str, rephrase: Callable[[str], list[str]], k: int = 10,
    **options: Any,
) -> SearchResult:
    """Rephrase the question N ways, search each, fuse the rankings (eval only, not the live path)."""
    variants = [query, *[v for v in rephrase(query) if v.strip() and v.strip() != query]]
    results = [search(scope=scope, query=v, ts_config=ts_config, k=k, **options) for v in variants]
    fused = reciprocal_rank_fusion({f"q{i}": [c.chunk_id for c in r.candidates] for i, r in enumerate(results)})
    pool = {c.chunk_id: c for r in results for c in r.candidates}
    combined = results[0]
    combined.candidates = [pool[f.chunk_id] for f in fused][:k]
    combined.timings_ms = {"total": round(sum(r.timings_ms["total"] for r in results), 2)}
    return combined
