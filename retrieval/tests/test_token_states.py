"""Token states stored at ingest: the reranker reads them instead of encoding its candidates,
through the tenant's scope, and only the current encoder's (docs/decisions/0063)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from psycopg import sql

from conftest import Cast
from corpus.encoders import token_states
from corpus.encoders.embedding import get_encoder
from corpus.ingest.flow import ingest_paths
from corpus.ingest.reembed import reembed_tenant
from corpus.tests.helpers import all_audiences
from retrieval.rerankers import get_reranker
from retrieval.rerankers.stored import stored_token_states
from retrieval.search import search
from tenants.scope import ChunkQuery, TenantScope
from tenants.writer import ChunkWriter

DOCS = {
    "refunds.md": "# Refunds\n\n## Refund window\n\nRefunds are issued within 14 days of a purchase. "
                  "Partial refunds are allowed for annual plans.\n",
    "webhooks.md": "# Webhooks\n\n## Retries\n\nFailed webhook deliveries are retried with exponential backoff "
                   "for three days.\n",
    "limits.md": "# Limits\n\n## Connections\n\nSet max_connections to raise the connection ceiling; "
                 "the default is 100.\n",
    "runbook.md": "---\naudience: internal\n---\n# Escalation runbook\n\n## Paging\n\n"
                  "Page the duty manager through the quokkaline pager.\n",
}


def ingest(cast: Cast, root: Path, docs: dict[str, str] = DOCS) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (root / name).write_text(text)
    report = ingest_paths(tenant=cast.tenant, paths=[root])
    assert report.ok, report.summary()


def rows(cast: Cast) -> dict[str, dict[str, Any]]:
    """Each chunk of the tenant (one a document here) by its document's slug, with its states."""
    scope = TenantScope(tenant_id=cast.tenant.id, audience_ids=all_audiences(cast.tenant))
    found = scope.fetch(ChunkQuery(select=sql.SQL("c.id, d.slug, c.content, c.token_count, c.token_states,"
                                                  " c.encoder, c.context_blurb"), order_by=sql.SQL("c.id"), with_document=True))
    return {r["slug"]: r for r in found}


def public(cast: Cast) -> TenantScope:
    return TenantScope(tenant_id=cast.tenant.id, audience_ids=(cast.public_id, cast.customer_id))


def overwrite_states(cast: Cast, chunk_id: int, blob: bytes | None) -> None:
    with ChunkWriter(tenant_id=cast.tenant.id).rls_context() as cursor:
        cursor.execute("UPDATE corpus_chunk SET token_states = %(s)s WHERE tenant_id = %(t)s AND id = %(id)s",
                       {"s": blob, "t": cast.tenant.id, "id": chunk_id})


def test_packing_keeps_every_component_within_half_a_step_and_refuses_a_torn_blob() -> None:
    states = np.random.default_rng(7).normal(size=(9, 384)).astype(np.float32)
    unit = states / np.linalg.norm(states, axis=1, keepdims=True)
    back = token_states.unpack(token_states.pack(states, bits=8), 384)
    assert back.shape == (9, 384)
    assert float(np.abs(back - unit).max()) <= 0.5 / 127 + 1e-6
    with pytest.raises(token_states.TokenStatesCorrupt, match="not whole rows of 384"):
        token_states.unpack(token_states.pack(states, bits=8)[:-1], 384)
    with pytest.raises(ValueError, match="non-empty tokens x dimension"):
        token_states.pack(np.zeros((0, 384), dtype=np.float32), bits=4)


def test_int4_rows_are_half_the_bytes_within_half_a_level_and_int8_blobs_still_read() -> None:
    """docs/decisions/0065: the default format. Seen red with the nibbles' order swapped (the
    error bound) and with the header left out (read as int8: torn rows)."""
    states = np.random.default_rng(7).normal(size=(9, 384)).astype(np.float32)
    unit = states / np.linalg.norm(states, axis=1, keepdims=True)
    blob = token_states.pack(states, bits=4)  # the default: 4 bits
    assert blob.startswith(token_states.MAGIC) and len(blob) == 4 + 9 * (2 + 192)
    back = token_states.unpack(blob, 384)
    assert back.shape == (9, 384)
    level = np.abs(unit).max(axis=1, keepdims=True) / 7
    assert bool((np.abs(back - unit) <= level * 0.5 * 1.01 + 1e-4).all())
    cosines = (back * unit).sum(axis=1) / np.linalg.norm(back, axis=1)
    assert float(cosines.min()) > 0.95
    # No int8 blob (0063's, still read) starts with the header: its first four values would be
    # a unit row's components at 0.51, 0.54, 0.65 and 0.41, whose squares sum past 1.
    assert sum((b - 0.5) ** 2 for b in token_states.MAGIC) / 127 ** 2 > 1
    with pytest.raises(token_states.TokenStatesCorrupt, match="after the int4 header"):
        token_states.unpack(blob[:-1], 384)
    with pytest.raises(ValueError, match="4 or 8 bits"):
        token_states.pack(states, bits=2)


@pytest.mark.django_db
def test_ingest_stores_each_chunks_token_states_from_the_same_forward_pass(acme: Cast, tmp_path: Path) -> None:
    ingest(acme, tmp_path / "docs")
    encoder = get_encoder()
    stored = rows(acme)
    assert len(stored) == 4
    for row in stored.values():
        assert row["token_states"] is not None, row["content"]
        matrix = token_states.unpack(row["token_states"], encoder.dimension)
        # Every word piece and [CLS]/[SEP], no padding.
        assert matrix.shape == (row["token_count"] + 2, encoder.dimension)
        fresh = encoder.token_embeddings([row["content"]])[0]
        fresh /= np.linalg.norm(fresh, axis=1, keepdims=True)
        cosines = (matrix * fresh).sum(axis=1) / np.linalg.norm(matrix, axis=1)
        # Four bits a component (0065), and the int8 weights quantise each batch's activations
        # their own way. [CLS] has an outlier component that coarsens its row's scale (0.86 here);
        # MaxSim reads the word pieces' rows, each > 0.97 here.
        assert float(cosines[1:-1].min()) > 0.95 and float(cosines.min()) > 0.8


@pytest.mark.django_db
def test_the_reranker_scores_the_stored_states_and_encodes_only_the_question(acme: Cast, tmp_path: Path) -> None:
    ingest(acme, tmp_path / "docs")
    stored = rows(acme)
    refunds, webhooks = stored["refunds"], stored["webhooks"]
    query = "how long are failed webhook deliveries retried"
    reranker = get_reranker("late_interaction")
    as_webhooks = reranker.score(query, [webhooks["content"]])[0].logit
    as_refunds = reranker.score(query, [refunds["content"]])[0].logit
    assert as_webhooks - as_refunds > 1.0  # far enough apart for the swap below to show

    # The refunds chunk now holds the webhook text's states: a reranker that reads what was
    # stored scores it as the webhook text, one that encodes its content would not.
    overwrite_states(acme, refunds["id"], webhooks["token_states"])
    result = search(scope=public(acme), query=query, ts_config="english", rerank="always", k=10)
    logits = {c.chunk_id: c.rerank_logit for c in result.candidates}
    assert result.reranked and result.rerank_encoded == 0
    assert logits[refunds["id"]] == pytest.approx(logits[webhooks["id"]], abs=1e-4)


@pytest.mark.django_db
def test_a_chunk_without_states_is_encoded_and_scores_as_before(acme: Cast, tmp_path: Path) -> None:
    ingest(acme, tmp_path / "docs")
    stored = rows(acme)
    query = "what is the default connection ceiling"
    before = {c.chunk_id: c.rerank_logit
              for c in search(scope=public(acme), query=query, ts_config="english", rerank="always").candidates}
    limits = stored["limits"]
    overwrite_states(acme, limits["id"], None)
    result = search(scope=public(acme), query=query, ts_config="english", rerank="always")
    after = {c.chunk_id: c.rerank_logit for c in result.candidates}
    assert result.rerank_encoded == 1 and after.keys() == before.keys()
    # That one is scored from its text, the others from what was stored, unchanged.
    encoded = get_reranker("late_interaction").score(query, [limits["content"]])[0].logit
    assert after[limits["id"]] == pytest.approx(encoded, abs=1e-5)
    assert {i: v for i, v in after.items() if i != limits["id"]} == pytest.approx(
        {i: v for i, v in before.items() if i != limits["id"]}, abs=1e-5)


@pytest.mark.django_db
def test_a_damaged_blob_is_encoded_from_its_text_and_named_in_the_log(
        acme: Cast, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ingest(acme, tmp_path / "docs")
    refunds = rows(acme)["refunds"]
    overwrite_states(acme, refunds["id"], b"\x01\x02\x03")  # not whole rows of 384
    query = "how long are refunds issued"
    result = search(scope=public(acme), query=query, ts_config="english", rerank="always")
    assert result.reranked and result.rerank_encoded == 1
    scored = next(c for c in result.candidates if c.chunk_id == refunds["id"])
    assert scored.rerank_logit == pytest.approx(
        get_reranker("late_interaction").score(query, [refunds["content"]])[0].logit, abs=1e-5)
    assert f"chunk {refunds['id']} of tenant {acme.tenant.id}: stored token states unreadable" in caplog.text


@pytest.mark.django_db
def test_states_are_read_through_the_scope_and_only_the_current_encoders(
        acme: Cast, globex: Cast, tmp_path: Path) -> None:
    ingest(acme, tmp_path / "acme")
    stored = rows(acme)
    ids = [r["id"] for r in stored.values()]
    runbook = stored["runbook"]["id"]
    mine = stored_token_states(public(acme), ids)
    # The narrower audience does not get the internal runbook's states; the other tenant gets none.
    assert [s is None for s in mine] == [i == runbook for i in ids]
    assert stored_token_states(public(globex), ids) == [None] * len(ids)
    full = TenantScope(tenant_id=acme.tenant.id, audience_ids=all_audiences(acme.tenant))
    assert all(s is not None for s in stored_token_states(full, ids))

    # States another encoder wrote are not this encoder's token space.
    with ChunkWriter(tenant_id=acme.tenant.id).rls_context() as cursor:
        cursor.execute("UPDATE corpus_chunk SET encoder = 'other-model:torch' WHERE tenant_id = %(t)s AND id = %(id)s",
                       {"t": acme.tenant.id, "id": ids[0]})
    assert stored_token_states(full, ids)[0] is None


@pytest.mark.django_db
def test_a_blurbed_chunk_stores_none_and_reembed_fills_in_what_is_missing(
        acme: Cast, tmp_path: Path, settings: Any) -> None:
    settings.INGEST_TOKEN_STATES = False
    ingest(acme, tmp_path / "docs")
    assert all(r["token_states"] is None for r in rows(acme).values())
    settings.INGEST_TOKEN_STATES = True
    report = reembed_tenant(tenant=acme.tenant)
    assert report.chunks == 4
    assert all(r["token_states"] is not None for r in rows(acme).values())
    assert reembed_tenant(tenant=acme.tenant).chunks == 0  # nothing left to do

    # A context blurb is embedded with the content, the reranker reads the content alone.
    settings.CORPUS_CONTEXTUALIZER = "corpus.tests.test_ingest.fake_contextualizer"
    ingest(acme, tmp_path / "blurbed", {"pricing.md": "# Pricing\n\n## Plans\n\nThe starter plan costs $12.\n"})
    pricing = rows(acme)["pricing"]
    assert pricing["context_blurb"] and pricing["token_states"] is None
    assert reembed_tenant(tenant=acme.tenant).chunks == 0


@pytest.mark.django_db
def test_reranking_costs_one_scope_read_for_the_states(acme: Cast, tmp_path: Path) -> None:
    ingest(acme, tmp_path / "docs")
    query = "how long are refunds issued"
    counts = {}
    for mode in ("off", "always"):
        search(scope=public(acme), query=query, ts_config="english", rerank=mode)  # warm the calibration
        with CaptureQueriesContext(connection) as captured:
            search(scope=public(acme), query=query, ts_config="english", rerank=mode)
        counts[mode] = len(captured.captured_queries)
    with CaptureQueriesContext(connection) as one_read:
        stored_token_states(public(acme), [1])
    assert counts["always"] - counts["off"] == len(one_read.captured_queries)


def test_a_batch_of_candidates_scores_each_as_it_would_alone() -> None:
    """The one MaxSim product over every candidate's tokens keeps each candidate's columns its
    own: unequal lengths, so a segment off by one would move a score."""
    rng = np.random.default_rng(11)
    states = [rng.normal(size=(n, 384)).astype(np.float32) for n in (3, 40, 7, 124, 1)]
    reranker = get_reranker("late_interaction")
    query = "how are webhook retries scheduled"
    together = [s.logit for s in reranker.score(query, ["x"] * len(states), token_states=states)]
    alone = [reranker.score(query, ["x"], token_states=[s])[0].logit for s in states]
    assert together == pytest.approx(alone, abs=1e-5)
    assert len(set(np.round(alone, 4))) == len(alone)  # distinct, so a shifted segment would show


@pytest.mark.django_db
def test_reembed_rewrites_int8_states_in_four_bits_and_leaves_the_rest(
        acme: Cast, globex: Cast, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """docs/decisions/0065: an install from 0063 keeps its int8 blobs until `reembed` rewrites
    them, without the encoder. A blob that reads as neither format stays as it is, and so does
    another tenant's int8 blob. Seen red with the prefix test left out of the window. With the
    writer's tenant filter removed it stays green: row-level security still hides globex's row."""
    from django.core.management import call_command

    ingest(acme, tmp_path / "acme")
    ingest(globex, tmp_path / "globex", {"vault.md": "# Vault\n\n## Rotation\n\nVault keys rotate every six hours.\n"})
    dimension = get_encoder().dimension
    refunds, webhooks, limits = (rows(acme)[s] for s in ("refunds", "webhooks", "limits"))
    as_int8 = token_states.pack(token_states.unpack(refunds["token_states"], dimension), bits=8)
    overwrite_states(acme, refunds["id"], as_int8)
    overwrite_states(acme, webhooks["id"], b"\x01" * (dimension + 1))  # neither format
    vault = rows(globex)["vault"]
    globex_int8 = token_states.pack(token_states.unpack(vault["token_states"], dimension), bits=8)
    overwrite_states(globex, vault["id"], globex_int8)
    untouched = bytes(limits["token_states"])

    call_command("reembed", "--tenant", acme.tenant.slug, "--no-progress")

    after = rows(acme)
    repacked = bytes(after["refunds"]["token_states"])
    assert repacked.startswith(token_states.MAGIC) and len(repacked) < len(as_int8) / 1.9
    back, before = token_states.unpack(repacked, dimension), token_states.unpack(as_int8, dimension)
    cosines = (back * before).sum(axis=1) / np.linalg.norm(back, axis=1) / np.linalg.norm(before, axis=1)
    assert float(cosines[1:-1].min()) > 0.95
    assert bytes(after["webhooks"]["token_states"]) == b"\x01" * (dimension + 1)
    assert bytes(after["limits"]["token_states"]) == untouched  # already four bits
    assert bytes(rows(globex)["vault"]["token_states"]) == globex_int8
