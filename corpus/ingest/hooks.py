"""After-commit notification of chunks that stopped being live.

corpus must not import the apps that care (the cache, above all), so listeners are named by
dotted path in settings (`CORPUS_CHUNK_LISTENERS`) and called after the ingest transaction
commits: a rolled-back ingest invalidates nothing, and a listener never sees ids that are
still live.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

Listener = Callable[..., None]


def listeners() -> list[Listener]:
    return [import_string(path) for path in getattr(settings, "CORPUS_CHUNK_LISTENERS", [])]


def _notify(tenant_id: int, chunk_ids: list[int], document_ids: list[int]) -> None:
    for listener in listeners():
        listener(tenant_id=tenant_id, chunk_ids=chunk_ids, document_ids=document_ids)


def on_commit_chunks_retired(*, tenant_id: int, chunk_ids: Sequence[int], document_ids: Sequence[int],
                             using: str = "default") -> None:
    """Call inside the ingest transaction; listeners run once it commits."""
    if not chunk_ids and not document_ids:
        return
    transaction.on_commit(partial(_notify, tenant_id, sorted(chunk_ids), sorted(document_ids)), using=using)
