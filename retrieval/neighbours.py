"""A context chunk's section neighbours: the chunks just before and after it under its heading.

Chunks are cut to a token budget, so the sentence that answers is often one chunk over from
the one that ranked: `subprocess.run`'s signature ranks first for "capture the output as a
str", and "If capture_output is true, stdout and stderr will be captured" opens the next chunk
of the same section. Retrieval keeps at most one chunk per document in its top (diversity),
so that chunk never reaches the answer. The answer reads the neighbours of the first context
chunks as well; ranking, the gate and page recall never see them (docs/decisions/0087).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from psycopg import sql

from corpus.embedding import vector_literal as vector_text
from retrieval.search import Candidate
from tenants.scope import ChunkQuery, TenantScope


def with_section_neighbours(scope: TenantScope, context: Sequence[Candidate], *, anchors: int,
                            query_vector: np.ndarray) -> list[Candidate]:
    """`context` with each of its first `anchors` chunks followed by the chunks on either side of
    it in its document that share its heading path; none twice, none already in the context."""
    leading = [c for c in context[:anchors] if c.ordinal >= 0]
    if not leading:
        return list(context)
    wanted = {(c.document_id, c.ordinal + step): c for c in leading for step in (-1, 1)}
    rows = scope.fetch(ChunkQuery(
        select=sql.SQL("c.id, c.document_id, c.ordinal, c.heading_path, c.content, c.page,"
                       " 1 - (c.embedding <=> %(v)s::vector) AS similarity"),
        # Index: corpus_chunk_document_id_ordinal_key (tenant_id, document_id, ordinal).
        where=sql.SQL("(c.document_id, c.ordinal) IN"
                      " (SELECT * FROM unnest(%(documents)s::bigint[], %(ordinals)s::int[]))"),
        params={"v": vector_text(query_vector), "documents": [document for document, _ in wanted],
                "ordinals": [ordinal for _, ordinal in wanted]},
    ))
    seen = {c.chunk_id for c in context}
    found: dict[int, list[Candidate]] = {}
    for row in sorted(rows, key=lambda r: (r["document_id"], r["ordinal"])):
        anchor = wanted[(row["document_id"], row["ordinal"])]
        if row["heading_path"] != anchor.heading_path or row["id"] in seen:
            continue
        seen.add(row["id"])
        found.setdefault(anchor.chunk_id, []).append(_neighbour(anchor, row))
    return [item for c in context for item in (c, *found.get(c.chunk_id, []))]


def _neighbour(anchor: Candidate, row: dict[str, Any]) -> Candidate:
    """The row as a candidate standing where its anchor stands: the same document, scores and
    labels, so the answerer's retrieval prior weighs it as it weighs the anchor."""
    return dataclasses.replace(
        anchor, chunk_id=row["id"], ordinal=row["ordinal"], content=row["content"], page=row["page"],
        vector_similarity=float(row["similarity"]), matched_terms=[], pinned=False, neighbour_of=anchor.chunk_id,
    )
