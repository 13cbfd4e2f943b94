"""Every vector records its encoder; a tenant never mixes two; reembed switches one in place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from psycopg import sql

from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.ingest.reembed import reembed_tenant
from corpus.ingest.store import EncoderMismatch
from corpus.tests.helpers import all_audiences, documents
from tenants.scope import ChunkQuery, TenantScope


def write_docs(root: Path, count: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (root / f"{root.name}-{i}.md").write_text(f"# Page {i}\n\n## Retries\n\nWebhook {i} is retried {i + 2} times.\n\n"
                                           f"## Limits\n\nAccount {i} may send {100 * (i + 1)} requests a minute.\n")
    return root


def chunk_rows(cast: Cast) -> list[dict[str, Any]]:
    scope = TenantScope(tenant_id=cast.tenant.id, audience_ids=all_audiences(cast.tenant))
    rows = scope.fetch(ChunkQuery(select=sql.SQL("c.id, c.content, c.encoder, c.embedding::text AS vector"),
                                  order_by=sql.SQL("c.id")))
    return [{**r, "vector": np.array([float(x) for x in r["vector"].strip("[]").split(",")])} for r in rows]


class Stop(Exception):
    pass


def stop_after_first(done: int) -> None:
    raise Stop(f"killed after {done} chunks")


@pytest.mark.django_db
def test_mixing_encoders_is_refused_and_reembed_switches_the_tenant(
    acme: Cast, encoder: Encoder, other_encoder: Encoder, tmp_path: Path, settings: Any
) -> None:
    report = ingest_paths(tenant=acme.tenant, paths=[write_docs(tmp_path / "docs", 3)], encoder=encoder)
    assert report.ok and report.chunks == 6
    assert {r["encoder"] for r in chunk_rows(acme)} == {encoder.identity}

    # The process now writes with another backend: adding its vectors to this tenant is refused,
    # and nothing is written.
    settings.EMBEDDING_BACKEND = other_encoder.backend.name
    before = {key: doc.content_hash for key, doc in documents(acme.tenant).items()}
    with pytest.raises(EncoderMismatch, match=f"holds vectors of encoder {encoder.identity}.*manage.py reembed"):
        ingest_paths(tenant=acme.tenant, paths=[write_docs(tmp_path / "more", 4)], encoder=other_encoder)
    assert {key: doc.content_hash for key, doc in documents(acme.tenant).items()} == before

    # A run killed after its first window leaves whole windows: those rows are the new
    # encoder's (vector and name together), the rest still the old one's; the tenant is mixed,
    # so ingest still refuses, and the next run finishes exactly the rest.
    with pytest.raises(Stop):
        reembed_tenant(tenant=acme.tenant, window=4, encoder=other_encoder, after_window=stop_after_first)
    rows = chunk_rows(acme)
    assert [r["encoder"] for r in rows] == [other_encoder.identity] * 4 + [encoder.identity] * 2
    with pytest.raises(EncoderMismatch):
        ingest_paths(tenant=acme.tenant, paths=[write_docs(tmp_path / "more", 4)], encoder=other_encoder)
    finished = reembed_tenant(tenant=acme.tenant, window=4, encoder=other_encoder)
    assert (finished.chunks, finished.windows) == (2, 1)

    rows = chunk_rows(acme)
    assert {r["encoder"] for r in rows} == {other_encoder.identity}
    # int8 quantises activations per batch, so a text's vector moves a little with its batch-mates.
    expected = other_encoder.encode([r["content"] for r in rows])
    assert (np.stack([r["vector"] for r in rows]) * expected).sum(axis=1).min() >= 0.99
    assert reembed_tenant(tenant=acme.tenant, encoder=other_encoder).chunks == 0  # nothing left to do

    report = ingest_paths(tenant=acme.tenant, paths=[write_docs(tmp_path / "more", 4)], encoder=other_encoder)
    assert report.ok and report.added == 4
    assert {r["encoder"] for r in chunk_rows(acme)} == {other_encoder.identity}


@pytest.mark.django_db
def test_reembed_touches_only_its_own_tenant(acme: Cast, globex: Cast, encoder: Encoder, other_encoder: Encoder,
                                              tmp_path: Path, settings: Any) -> None:
    ingest_paths(tenant=acme.tenant, paths=[write_docs(tmp_path / "a", 2)], encoder=encoder)
    ingest_paths(tenant=globex.tenant, paths=[write_docs(tmp_path / "g", 2)], encoder=encoder)
    settings.EMBEDDING_BACKEND = other_encoder.backend.name
    assert reembed_tenant(tenant=acme.tenant, encoder=other_encoder).chunks == 4
    assert {r["encoder"] for r in chunk_rows(globex)} == {encoder.identity}


@pytest.mark.django_db
def test_reembed_command_names_a_missing_tenant() -> None:
    with pytest.raises(CommandError, match="tenant 'nobody' does not exist"):
        call_command("reembed", tenant="nobody")


@pytest.mark.django_db
def test_reembed_all_switches_every_stale_tenant_and_names_only_those(
    acme: Cast, globex: Cast, encoder: Encoder, other_encoder: Encoder, tmp_path: Path, settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from io import StringIO

    ingest_paths(tenant=acme.tenant, paths=[write_docs(tmp_path / "a", 2)], encoder=encoder)
    settings.EMBEDDING_BACKEND = other_encoder.backend.name
    ingest_paths(tenant=globex.tenant, paths=[write_docs(tmp_path / "g", 1)], encoder=other_encoder)
    monkeypatch.setattr("corpus.ingest.reembed.get_encoder", lambda: other_encoder)  # the process's encoder
    out = StringIO()
    call_command("reembed", all=True, no_progress=True, stdout=out)
    assert {r["encoder"] for r in chunk_rows(acme)} == {other_encoder.identity}
    assert {r["encoder"] for r in chunk_rows(globex)} == {other_encoder.identity}
    assert f"{acme.tenant.slug}: 4 chunks re-encoded" in out.getvalue()
    # Already the configured encoder's: untouched, unnamed. By line, not substring: tenants other
    # tests committed (iso-globex) share the name's letters and are reported on their own lines.
    named = {line.split(":", 1)[0] for line in out.getvalue().splitlines()}
    assert acme.tenant.slug in named and globex.tenant.slug not in named


@pytest.mark.django_db
def test_reembed_all_leaves_an_evaluation_shadow_on_its_arms_encoder(
    acme: Cast, globex: Cast, encoder: Encoder, other_encoder: Encoder, tmp_path: Path, settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A shadow built by an encoder arm holds that encoder's vectors on purpose: `make run`
    re-encoding it would measure the default encoder under the arm's name (0070)."""
    from io import StringIO

    from tenants.models import Tenant

    ingest_paths(tenant=acme.tenant, paths=[write_docs(tmp_path / "a", 1)], encoder=encoder)
    Tenant.objects.filter(pk=globex.tenant.pk).update(shadow_of=acme.tenant)  # globex: acme's shadow
    ingest_paths(tenant=globex.tenant, paths=[write_docs(tmp_path / "g", 1)], encoder=encoder)
    settings.EMBEDDING_BACKEND = other_encoder.backend.name
    monkeypatch.setattr("corpus.ingest.reembed.get_encoder", lambda: other_encoder)
    out = StringIO()
    call_command("reembed", all=True, no_progress=True, stdout=out)
    assert {r["encoder"] for r in chunk_rows(acme)} == {other_encoder.identity}
    assert {r["encoder"] for r in chunk_rows(globex)} == {encoder.identity}
    assert "evaluation shadow(s) alone" in out.getvalue()
    # By hand, a shadow can still be re-encoded: only --all passes over it.
    call_command("reembed", tenant=globex.tenant.slug, no_progress=True, stdout=StringIO())
    assert {r["encoder"] for r in chunk_rows(globex)} == {other_encoder.identity}


def test_reembed_command_wants_a_tenant_or_all() -> None:
    with pytest.raises(CommandError, match="one of the arguments --tenant --all is required"):
        call_command("reembed")
