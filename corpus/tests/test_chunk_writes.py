"""What the chunk writes store: the tsvector and length the text gives (a trigger sets them,
docs/decisions/0029), and windows written in one transaction (docs/decisions/0030)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.tests.helpers import all_audiences, assert_statistics_match_chunks, chunk_counts, documents
from tenants.scope import ChunkQuery, TenantScope
from tenants.writer import ChunkWriter

TEXT = ("# Limits\n\n## Connections\n\nSet max_connections to 200 when error E1042 appears; "
        "connections connect and reconnect.\n")

# Each column next to what the text gives; compared in the database, so any drift shows.
AGREEMENT = ChunkQuery(
    select=sql.SQL(
        "c.id, c.term_count AS length,"
        " c.tsv = to_tsvector(c.ts_config, c.content) || array_to_tsvector(c.exact_terms) AS tsv_ok,"
        " c.term_count = answerdesk_term_count(c.tsv) AS length_ok,"
        " array(SELECT u.lexeme FROM unnest(c.tsv) u ORDER BY 1) AS lexemes"
    ),
    order_by=sql.SQL("c.id"),
)


def agreement(cast: Cast) -> list[dict[str, Any]]:
    scope = TenantScope(tenant_id=cast.tenant.id, audience_ids=all_audiences(cast.tenant))
    return scope.fetch(AGREEMENT)


@pytest.mark.django_db
def test_tsvector_and_length_are_what_the_text_gives(acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    (tmp_path / "limits.md").write_text(TEXT)
    assert ingest_paths(tenant=acme.tenant, paths=[tmp_path], encoder=encoder).added == 1
    rows = agreement(acme)
    assert rows and all(r["tsv_ok"] and r["length_ok"] for r in rows)
    lexemes = rows[0]["lexemes"]
    assert "=max_connections" in lexemes and "=e1042" in lexemes and "connect" in lexemes
    assert rows[0]["length"] > len(lexemes)  # "connect" occurs three times: positions count
    assert_statistics_match_chunks(acme.tenant)


@pytest.mark.django_db
def test_an_update_cannot_plant_a_tsvector_the_text_does_not_give(acme: Cast, encoder: Encoder,
                                                                    tmp_path: Path) -> None:
    (tmp_path / "limits.md").write_text(TEXT)
    ingest_paths(tenant=acme.tenant, paths=[tmp_path], encoder=encoder)
    before = agreement(acme)
    writer = ChunkWriter(tenant_id=acme.tenant.id)
    with writer.rls_context() as cursor:
        cursor.execute("UPDATE corpus_chunk SET tsv = to_tsvector('simple', 'planted'), term_count = 999"
                       " WHERE tenant_id = %s", [acme.tenant.id])
    after = agreement(acme)
    assert after == before
    assert all("planted" not in r["lexemes"] and r["length"] != 999 for r in after)
    with writer.rls_context() as cursor:
        cursor.execute("UPDATE corpus_chunk SET content = content || ' Zebrafish.' WHERE tenant_id = %s",
                       [acme.tenant.id])
    edited = agreement(acme)
    assert all(r["tsv_ok"] and r["length_ok"] and "zebrafish" in r["lexemes"] for r in edited)


@pytest.mark.django_db
def test_one_window_with_the_same_document_twice_keeps_the_later(acme: Cast, encoder: Encoder,
                                                                  tmp_path: Path) -> None:
    for folder, version in (("a", "first"), ("b", "second")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "same.md").write_text(f"# Same\n\nThe {version} version of this page.\n")
        (tmp_path / folder / f"only-{folder}.md").write_text(f"# Only {folder}\n\nA page of folder {folder}.\n")
    report = ingest_paths(tenant=acme.tenant, paths=[tmp_path / "a", tmp_path / "b"], encoder=encoder)
    assert (report.added, report.changed, report.unchanged) == (3, 1, 0), report.summary()
    docs = documents(acme.tenant)
    assert set(docs) == {("doc", "same"), ("doc", "only-a"), ("doc", "only-b")}
    assert docs[("doc", "same")].source_path.endswith("b/same.md")
    assert chunk_counts(acme.tenant) == {d.pk: d.chunk_count for d in docs.values()}
    scope = TenantScope(tenant_id=acme.tenant.id, audience_ids=all_audiences(acme.tenant))
    texts = [r["content"] for r in scope.fetch(ChunkQuery(select=sql.SQL("c.content"),
                                                           where=sql.SQL("c.content LIKE %(p)s"),
                                                           params={"p": "%version of this page%"}))]
    assert len(texts) == 1 and "second version" in texts[0]
    assert_statistics_match_chunks(acme.tenant)
