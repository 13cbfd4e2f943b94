"""Plant documents and chunks directly through the chunk writer (no model, no parser)."""

from __future__ import annotations

import hashlib

import numpy as np

from corpus.models import Document
from corpus.language.terms import exact_terms
from tenants.writer import ChunkRow, ChunkWriter

DIM = 384


def unit_vector(seed: str) -> list[float]:
    rng = np.random.default_rng(int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16))
    vector = rng.standard_normal(DIM)
    return (vector / np.linalg.norm(vector)).tolist()


def plant(*, tenant_id: int, audience_id: int, slug: str, content: str, archived: bool = False) -> int:
    writer = ChunkWriter(tenant_id=tenant_id)
    with writer.rls_context() as cursor:
        document = Document.objects.create(
            tenant_id=tenant_id,
            audience_id=audience_id,
            slug=slug,
            title=slug,
            content_hash=hashlib.sha256(content.encode()).hexdigest(),
            status=Document.Status.ARCHIVED if archived else Document.Status.ACTIVE,
        )
        writer.insert(
            cursor,
            [
                ChunkRow(
                    document_id=document.pk,
                    audience_id=audience_id,
                    ordinal=0,
                    heading_path=slug,
                    content=content,
                    token_count=len(content.split()),
                    embedding=unit_vector(slug),
                    exact_terms=exact_terms(content),
                )
            ],
        )
        if archived:
            writer.set_archived(cursor, [document.pk], True)
    return document.pk
