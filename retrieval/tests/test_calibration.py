from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import _make_cast
from corpus.ingest.flow import ingest_paths
from retrieval import calibration
from retrieval.tests.conftest import ACME_DOCS, RetrievalWorld, _write
from tenants.scope import TenantScope


def public(world: RetrievalWorld) -> TenantScope:
    return TenantScope(tenant_id=world.acme.tenant.id, audience_ids=(world.acme.public_id,))


@pytest.mark.django_db
def test_the_chance_level_is_measured_on_the_scope_and_is_the_same_every_time(
        retrieval_world: RetrievalWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calibration, "PRIOR_PAIRS", 0)  # the scope's own pairs only
    scope = public(retrieval_world)
    count = scope.corpus_totals()[0]
    first = calibration.build(scope, chunk_count=count)
    again = calibration.build(scope, chunk_count=count)
    assert first == again and first.pairs > 0
    # Headings asked of unrelated chunks: well above -1, well below a real match.
    assert 0.0 < first.chance < 0.5 and first.spread > 0.0
    internal = calibration.build(TenantScope(tenant_id=retrieval_world.acme.tenant.id,
                                             audience_ids=(retrieval_world.acme.public_id,
                                                           retrieval_world.acme.internal_id)), chunk_count=count)
    assert internal.chance != first.chance  # another corpus (the runbook too), another level


@pytest.mark.django_db
def test_a_calibration_is_kept_per_scope_and_rebuilt_when_the_corpus_moves(retrieval_world: RetrievalWorld) -> None:
    scope = public(retrieval_world)
    calibration._CACHE.clear()
    kept = calibration.calibration_for(scope, chunk_count=100)
    assert calibration.calibration_for(scope, chunk_count=105) is kept  # within STALE_SHARE
    rebuilt = calibration.calibration_for(scope, chunk_count=120)
    assert rebuilt is not kept and rebuilt.chunk_count == 120


@pytest.mark.django_db
def test_an_empty_scope_has_no_chance_level_to_measure(retrieval_world: RetrievalWorld) -> None:
    nobody = TenantScope(tenant_id=retrieval_world.acme.tenant.id, audience_ids=())
    empty = calibration.build(nobody, chunk_count=0)
    assert empty.chance == calibration.PRIOR_CHANCE and empty.pairs == 0


@pytest.mark.django_db
def test_a_one_document_scope_has_no_pair_to_measure_chance_on(retrieval_world: RetrievalWorld) -> None:
    # Globex holds one document: its heading against its own chunk is a match, not chance.
    globex = TenantScope(tenant_id=retrieval_world.globex.tenant.id, audience_ids=(retrieval_world.globex.public_id,))
    alone = calibration.build(globex, chunk_count=1)
    assert alone.pairs == 0 and alone.chance == calibration.PRIOR_CHANCE


@pytest.mark.django_db
def test_a_scope_with_a_handful_of_pairs_stays_near_the_prior(retrieval_world: RetrievalWorld,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Two or three pages on one topic measure the topic, not chance: their pairs move the
    level only as far as their number weighs against PRIOR_PAIRS."""
    scope = public(retrieval_world)
    count = scope.corpus_totals()[0]
    weighted = calibration.build(scope, chunk_count=count)
    monkeypatch.setattr(calibration, "PRIOR_PAIRS", 0)
    raw = calibration.build(scope, chunk_count=count)
    assert 0 < raw.pairs < 100 and raw.chance != calibration.PRIOR_CHANCE
    share = raw.pairs / (raw.pairs + 100)
    assert weighted.chance == pytest.approx(share * raw.chance + (1 - share) * calibration.PRIOR_CHANCE)
    assert abs(weighted.chance - calibration.PRIOR_CHANCE) < abs(raw.chance - calibration.PRIOR_CHANCE)


@pytest.fixture(scope="module")
def acme_twin(retrieval_world: RetrievalWorld, django_db_blocker: Any,
              tmp_path_factory: pytest.TempPathFactory) -> TenantScope:
    """Acme's documents loaded again into another tenant: the same text under other ids."""
    root: Path = tmp_path_factory.mktemp("twin")
    with django_db_blocker.unblock():
        twin = _make_cast("ret-acme-twin")
        ingest_paths(tenant=twin.tenant, paths=[_write(root, ACME_DOCS)])
    return TenantScope(tenant_id=twin.tenant.id, audience_ids=(twin.public_id,))


@pytest.mark.django_db
def test_the_same_documents_calibrate_the_same_in_another_tenant_or_install(
        retrieval_world: RetrievalWorld, acme_twin: TenantScope, monkeypatch: pytest.MonkeyPatch) -> None:
    """The samples are drawn by the chunk text, not by ids a load order assigns: on ids, a
    fresh install of the same manual moved a case across the gate (docs/decisions/0066).
    Samples smaller than the corpus, so which chunks are drawn matters."""
    monkeypatch.setattr(calibration, "PRIOR_PAIRS", 0)
    monkeypatch.setattr(calibration, "PSEUDO_QUERIES", 2)
    monkeypatch.setattr(calibration, "CHUNK_SAMPLE", 3)
    scope = public(retrieval_world)
    ours = calibration.build(scope, chunk_count=scope.corpus_totals()[0])
    twins = calibration.build(acme_twin, chunk_count=acme_twin.corpus_totals()[0])
    assert ours.pairs > 0 and twins.pairs == ours.pairs
    assert twins.chance == pytest.approx(ours.chance, abs=1e-6)
