"""Token states the ingest stored (corpus/token_states.py), read through the tenant's scope.

Only states the current encoder wrote are returned: a chunk whose vector another encoder
wrote (a tenant mid-`reembed`) gets None and is encoded at query time, like a chunk that has
none stored.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from psycopg import sql

from corpus.embedding import get_encoder
from corpus.token_states import unpack
from tenants.scope import ChunkQuery, TenantScope


def stored_token_states(scope: TenantScope, chunk_ids: Sequence[int]) -> list[np.ndarray | None]:
    """Each chunk's stored token states in the order given, or None where there are none."""
    if not chunk_ids:
        return []
    encoder = get_encoder()
    # Index: corpus_chunk_pkey; the states themselves come out of TOAST, ~55 kB a chunk.
    rows = scope.fetch(ChunkQuery(
        select=sql.SQL("c.id, c.token_states"),
        where=sql.SQL("c.id = ANY(%(ids)s) AND c.encoder = %(encoder)s AND c.token_states IS NOT NULL"),
        params={"ids": list(chunk_ids), "encoder": encoder.identity},
    ))
    found = {int(row["id"]): unpack(row["token_states"], encoder.dimension) for row in rows}
    return [found.get(chunk_id) for chunk_id in chunk_ids]
