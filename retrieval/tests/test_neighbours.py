"""The answer reads a context chunk's section neighbours (docs/decisions/0087)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from psycopg import sql

from conftest import Cast, _make_cast
from corpus.ingest import ingest_paths
from retrieval.neighbours import with_section_neighbours
from retrieval.search import Candidate
from tenants.scope import ChunkQuery, TenantScope

# Paragraphs long enough that the chunker (CHUNK_TARGET_TOKENS) gives each its own chunk.
FILLER = ("The daemon keeps its queue in memory and writes it out when the operator asks for it, and "
          "it reads the configuration file once when it starts. ") * 6
GUIDE = (
    "# Harbour daemon\n\n## Queue handling\n\n"
    f"The harbour daemon starts with an empty queue. {FILLER}\n\n"
    f"Set flush_interval to choose how often the quokka queue is flushed to disk. {FILLER}\n\n"
    f"The default flush_interval is ninety seconds, and zero turns flushing off. {FILLER}\n\n"
    "## Logging\n\n"
    f"Log lines go to the journal unless log_file names a file. {FILLER}\n"
)


@pytest.fixture
def harbour(db: None, tmp_path: Path) -> Cast:
    cast = _make_cast("nb-harbour")
    (tmp_path / "harbour.md").write_text(GUIDE)
    ingest_paths(tenant=cast.tenant, paths=[tmp_path])
    return cast


def public(cast: Cast) -> TenantScope:
    return TenantScope(tenant_id=cast.tenant.id, audience_ids=(cast.public_id,))


def stored(cast: Cast) -> list[Candidate]:
    """Every chunk of the tenant as a context candidate, in document order (a plain read)."""
    rows = public(cast).fetch(ChunkQuery(
        select=sql.SQL("c.id, c.document_id, c.ordinal, c.heading_path, c.content, d.slug, d.title"),
        order_by=sql.SQL("c.ordinal"), with_document=True))
    return [Candidate(chunk_id=r["id"], document_id=r["document_id"], slug=r["slug"], title=r["title"],
                      source_type="doc", heading_path=r["heading_path"], content=r["content"], page=None, version="",
                      effective_date=None, contested=False, fused_score=0.0, ranks={}, vector_similarity=0.0,
                      keyword_coverage=0.0, matched_terms=[], ordinal=r["ordinal"]) for r in rows]


VECTOR = np.zeros(384, dtype=np.float32)


def test_each_chunk_brings_the_chunks_either_side_under_its_own_heading_and_no_other(harbour: Cast) -> None:
    chunks = stored(harbour)
    by_ordinal = {c.ordinal: c for c in chunks}
    pairs = 0
    crossings = 0
    for anchor in chunks:
        context = with_section_neighbours(public(harbour), [anchor], anchors=1, query_vector=VECTOR)
        assert context[0] is anchor
        expected = []
        for ordinal in (anchor.ordinal - 1, anchor.ordinal + 1):
            beside = by_ordinal.get(ordinal)
            if beside is not None and beside.heading_path == anchor.heading_path:
                expected.append(ordinal)
            elif beside is not None:
                crossings += 1
        assert [c.ordinal for c in context[1:]] == expected
        assert all(c.neighbour_of == anchor.chunk_id and c.document_id == anchor.document_id
                   and c.heading_path == anchor.heading_path for c in context[1:])
        pairs += len(expected) == 2
    # The premise: the guide has a chunk with two neighbours and a heading boundary to refuse.
    assert pairs and crossings


def test_a_chunk_already_in_the_context_is_not_read_twice_and_anchors_zero_reads_none(harbour: Cast) -> None:
    chunks = stored(harbour)
    anchor = next(c for c in chunks if c.ordinal == 1)
    before = next(c for c in chunks if c.ordinal == 0)
    assert before.heading_path == anchor.heading_path
    context = with_section_neighbours(public(harbour), [anchor, before], anchors=2, query_vector=VECTOR)
    assert len({c.chunk_id for c in context}) == len(context)
    assert [c.ordinal for c in context] == [1, 2, 0]
    assert with_section_neighbours(public(harbour), [anchor], anchors=0, query_vector=VECTOR) == [anchor]


def test_neighbours_are_read_through_the_askers_scope(harbour: Cast) -> None:
    """Another tenant's scope handed this tenant's chunk reads nothing of it: the scope's weld."""
    anchor = next(c for c in stored(harbour) if c.ordinal == 1)
    stranger = _make_cast("nb-stranger")
    assert with_section_neighbours(public(stranger), [anchor], anchors=1, query_vector=VECTOR) == [anchor]
