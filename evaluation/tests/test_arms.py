"""Indexing arms build shadow tenants and leave the live index alone; provider arms without a
provider are skipped with the reason, never run as hybrid under another name; multi-query
rephrases through a real local HTTP server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from answering.tests.fake_provider import fake_provider
from corpus.encoders.embedding import get_encoder
from corpus.ingest.reembed import reembed_tenant
from evaluation.arms import ARMS
from evaluation.golden import load_golden
from evaluation.locators import tenant_chunks
from evaluation.report import render_html
from evaluation.runner import run_eval
from evaluation.shadow import ingest_inputs, shadow_build
from tenants.models import Audience, Tenant
from tenants.scope import ChunkQuery, TenantScope

GOLDEN = """
tenant: paylane
cases:
  - {id: a-1, type: normal, question: "What does error PL-4031 mean?", expected: [{source: doc, slug: api/errors}],
     must_contain: ["insufficient funds"]}
  - {id: a-2, type: must_abstain, question: "What is the capital of Mongolia?"}
  - {id: a-3, type: tenant_probe, tenant: helpwise, question: "What does error PL-4031 mean?",
     expected: [{source: doc, slug: api/errors}]}
"""


def _golden(tmp_path: Path) -> Any:
    path = tmp_path / "g.yaml"
    path.write_text(GOLDEN)
    return load_golden(path)


def _contents(tenant: Tenant) -> list[dict[str, Any]]:
    scope = TenantScope(tenant_id=tenant.id, include_archived=True,
                        audience_ids=tuple(Audience.objects.filter(tenant=tenant).values_list("id", flat=True)))
    return scope.fetch(ChunkQuery(select=sql.SQL("c.id, c.heading_path, c.content, c.context_blurb")))


def test_inputs_are_recovered_from_source_paths(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "answerdesk-manifest.yaml").write_text("conflicts: []\n")
    docs = [("doc", "api/errors", "h", f"{tmp_path}/docs/api/errors.md"),
            ("ticket", "T-1", "h", f"{tmp_path}/tickets.json#T-1"),
            ("doc", "sql-select", "h", "/usr/share/doc/postgresql-doc-15/html/sql-select.html")]
    paths, manifest = ingest_inputs(docs)
    assert paths == sorted([tmp_path / "docs", tmp_path / "tickets.json", Path("/usr/share/doc/postgresql-doc-15/html")])
    assert manifest == tmp_path / "answerdesk-manifest.yaml"


@pytest.mark.django_db
def test_indexing_arms_use_shadow_tenants_and_provider_arms_are_skipped(demo_corpus: Any, tmp_path: Path,
                                                                       settings: Any) -> None:
    settings.ANSWER_PROVIDERS = ""
    live = Tenant.objects.get(slug="paylane")
    before = {r["id"]: r["content"] for r in _contents(live)}
    messages: list[str] = []
    report = run_eval(golden=_golden(tmp_path), tenant=live, say=messages.append,
                      arms=["hybrid", "shadow_rebuilt", "contextual_llm", "multi_query"])
    assert {r["id"]: r["content"] for r in _contents(live)} == before  # the live index is untouched

    rebuilt = report["arms"]["shadow_rebuilt"]
    assert rebuilt["tenant"] == "paylane--rebuilt" and rebuilt["errors"] == [] and not rebuilt["hard_failures"]
    assert rebuilt["metrics"]["page_recall@5"] == 1.0
    shadow = Tenant.objects.get(slug="paylane--rebuilt")
    assert sorted(r["content"] for r in _contents(shadow)) == sorted(before.values())  # the same defaults
    assert not set(tenant_chunks(shadow)) & set(before)

    for arm in ("contextual_llm", "multi_query"):
        assert report["arms"][arm]["skipped"].startswith("skipped: needs a model provider")
        assert report["arms"][arm]["metrics"] == {}
    assert not Tenant.objects.filter(slug="paylane--ctx-llm").exists()
    html = render_html(report)
    assert "needs a model provider" in html and "paylane--rebuilt" in html
    assert html.count("<polyline") == 2 * 2  # heading and page lines for the two arms that ran

    # Same live documents, same settings: the shadow is reused without parsing a file.
    messages.clear()
    run_eval(golden=_golden(tmp_path), tenant=live, arms=["shadow_rebuilt"], say=messages.append)
    assert any("reused" in m for m in messages), messages


class _Killed(Exception):
    pass


def _kill(done: int) -> None:
    raise _Killed(done)


@pytest.mark.django_db
def test_a_reused_shadow_gets_this_processs_encoder_back(demo_corpus: Any, settings: Any) -> None:
    """The stamp says what was built, not what a later change of encoder left: a shadow built
    under one encoder and asked under another (the operator changed EMBEDDING_BACKEND; `reembed
    --all` leaves shadows alone) is re-encoded before the arm reads it, never measured mixed (0070)."""
    from django.test.utils import override_settings

    live = Tenant.objects.get(slug="paylane")
    other = {"EMBEDDING_BACKEND": "onnx-int8" if settings.EMBEDDING_BACKEND == "torch" else "torch"}
    with override_settings(**other):
        first_encoder = get_encoder().identity
        shadow = shadow_build(tenant=live, name="heal", ingest={})
    assert shadow.shadow_of_id == live.id
    assert {r["encoder"] for r in _encoders(shadow)} == {first_encoder}
    with pytest.raises(_Killed):  # one window of the configured encoder, as a `reembed` by hand once wrote
        reembed_tenant(tenant=shadow, window=16, after_window=_kill)
    assert {r["encoder"] for r in _encoders(shadow)} == {first_encoder, get_encoder().identity}

    messages: list[str] = []
    with override_settings(**other):
        assert shadow_build(tenant=live, name="heal", ingest={}, say=messages.append).pk == shadow.pk
    assert {r["encoder"] for r in _encoders(shadow)} == {first_encoder}
    assert len(messages) == 1, messages
    assert messages[0].endswith("reused, 16 chunk(s) held another encoder's vectors and were re-encoded")


def test_an_arm_naming_no_ingest_field_fails_before_anything_is_built() -> None:
    from corpus.config import IngestConfig

    with pytest.raises(ValueError, match="IngestConfig has no field CORPUS_CONTEXTUALIZER"):
        IngestConfig.from_settings().with_overrides({"CORPUS_CONTEXTUALIZER": "x"})
    for arm in ARMS.values():
        IngestConfig.from_settings().with_overrides(arm.ingest)  # every arm's ingest names fields


def _encoders(tenant: Tenant) -> list[dict[str, Any]]:
    scope = TenantScope(tenant_id=tenant.id, include_archived=True,
                        audience_ids=tuple(Audience.objects.filter(tenant=tenant).values_list("id", flat=True)))
    return scope.fetch(ChunkQuery(select=sql.SQL("c.id, c.encoder")))


@pytest.mark.django_db
def test_multi_query_rephrases_through_the_provider_and_reports_retrieval_only(
        demo_corpus: Any, tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    with fake_provider() as (url, script):
        settings.ANSWER_PROVIDERS = f"openai|{url}/v1|FAKE_OPENAI_KEY|gpt-4o-mini"
        script.openai.extend([("ok", json.dumps({"queries": ["PL-4031 error code meaning",
                                                            "why was my charge declined with PL-4031"]})),
                              ("ok", json.dumps({"queries": ["capital city of Mongolia"]}))])
        report = run_eval(golden=_golden(tmp_path), tenant=Tenant.objects.get(slug="paylane"), arms=["multi_query"])
    arm = report["arms"]["multi_query"]
    assert "skipped" not in arm
    assert len([r for r in script.requests if "Rewrite this customer question" in json.dumps(r["body"])]) == 2
    case = next(c for c in arm["cases"] if c["id"] == "a-1")
    assert case["hit_rank"] == 1 and "action" not in case
    # Retrieval only: answer metrics are skipped, never zero.
    assert arm["metrics"]["fact_coverage"] is None and arm["metrics"]["abstention_recall"] is None
    assert arm["metrics"]["recall@5"] == 1.0
