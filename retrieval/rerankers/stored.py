"""Token states the ingest stored (corpus/encoders/token_states.py), read through the tenant's scope.

Only states the current encoder wrote are returned: a chunk whose vector another encoder
wrote (a tenant mid-`reembed`) gets None and is encoded at query time, like a chunk that has
none stored. So does a blob that is not whole rows: one damaged row must not fail every
question whose candidates include it; the warning names it, and `reembed` cannot see it (it
is not NULL), so the fix is re-ingesting its document.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
from psycopg import sql

from corpus.encoders.embedding import get_encoder
from corpus.encoders.token_states import TokenStatesCorrupt, unpack
from tenants.scope import ChunkQuery, TenantScope

logger = logging.getLogger(__name__)


def stored_token_states(scope: TenantScope, chunk_ids: Sequence[int]) -> list[np.ndarray | None]:
    """Each chunk's stored token states in the order given, or None where there are none."""
    if not chunk_ids:
        return []
    encoder = get_encoder()
    # Index: corpus_chunk_pkey; the states themselves come out of TOAST, ~28 kB a chunk (0065).
    rows = scope.fetch(ChunkQuery(
        select=sql.SQL("c.id, c.token_states"),
        where=sql.SQL("c.id = ANY(%(ids)s) AND c.encoder = %(encoder)s AND c.token_states IS NOT NULL"),
        params={"ids": list(chunk_ids), "encoder": encoder.identity},
    ))
    found: dict[int, np.ndarray] = {}
    for row in rows:
        try:
            found[int(row["id"])] = unpack(row["token_states"], encoder.dimension)
        except TokenStatesCorrupt as exc:
            logger.warning("chunk %s of tenant %s: stored token states unreadable (%s); encoding its text",
                           row["id"], scope.tenant_id, exc)
    return [found.get(chunk_id) for chunk_id in chunk_ids]
