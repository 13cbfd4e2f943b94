"""The committed demo corpus loads cleanly, with its planted supersession, conflict and audiences."""

from __future__ import annotations

from typing import Any

import pytest

from corpus.encoders.embedding import get_encoder
from corpus.tests.helpers import documents, stored_chunks
from tenants.models import Tenant


@pytest.mark.django_db
def test_demo_corpus_loads_with_its_planted_cases(demo_corpus: list[Any]) -> None:
    # paylane and helpwise in English, tlapka in Czech (docs/decisions/0050).
    assert len(demo_corpus) == 3 and all(r.ok for r in demo_corpus), [r.failed for r in demo_corpus]
    assert (Tenant.objects.get(slug="tlapka").language, Tenant.objects.get(slug="paylane").language) == ("cs", "en")
    assert all(not r.warnings for r in demo_corpus), [r.warnings for r in demo_corpus]
    paylane = Tenant.objects.get(slug="paylane")
    docs = documents(paylane)
    assert len(docs) >= 40
    assert {kind for kind, _ in docs} == {"doc", "changelog", "ticket"}
    assert docs[("doc", "billing/pricing-2024")].status == "archived"
    assert docs[("doc", "billing/pricing-2024")].superseded_by_id == docs[("doc", "billing/pricing")].pk
    audiences = {d.audience.slug for d in docs.values()}
    assert audiences == {"public", "customer", "internal"}
    chunks = stored_chunks(paylane)
    contested_docs = {c["document_id"] for c in chunks if c["contested"]}
    assert contested_docs == {docs[("doc", "guides/webhooks")].pk, docs[("changelog", "CL-2025-06")].pk}
    limit = get_encoder().max_content_tokens
    recount = get_encoder().count_batch([c["content"] for c in chunks])
    assert max(recount) <= limit  # re-tokenised: nothing stored over the model's limit
