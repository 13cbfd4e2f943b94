"""After-commit notification of chunks that stopped being live.

corpus must not import the apps that care (the cache, above all), so an app that cares
registers its listener when it is ready (cachelayer/apps.py), and listeners are called after the
ingest transaction commits: a rolled-back ingest invalidates nothing, and a listener never sees
ids that are still live.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial

from django.db import transaction

logger = logging.getLogger(__name__)

Listener = Callable[..., object]  # called for its effect; what it returns is not read


_LISTENERS: list[Listener] = []


def chunk_listener_register(listener: Listener) -> None:
    """Called by an app's ready(): `listener(tenant_id=, chunk_ids=, document_ids=)` after each commit."""
    if listener not in _LISTENERS:
        _LISTENERS.append(listener)


def chunk_listener_unregister(listener: Listener) -> None:
    if listener in _LISTENERS:
        _LISTENERS.remove(listener)


def listeners() -> list[Listener]:
    return list(_LISTENERS)


def _notify(tenant_id: int, chunk_ids: list[int], document_ids: list[int]) -> None:
    for listener in listeners():
        listener(tenant_id=tenant_id, chunk_ids=chunk_ids, document_ids=document_ids)


def on_commit_chunks_retired(*, tenant_id: int, chunk_ids: Sequence[int], document_ids: Sequence[int],
                             using: str = "default") -> None:
    """Call inside the ingest transaction; listeners run once it commits."""
    if not chunk_ids and not document_ids:
        return
    transaction.on_commit(partial(_notify, tenant_id, sorted(chunk_ids), sorted(document_ids)), using=using)
