"""The eval command end to end on a small golden set over the demo corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

GOLDEN = Path(__file__).parent / "data" / "demo-small.yaml"


@pytest.mark.django_db
def test_eval_writes_json_and_html_with_the_required_keys(demo_corpus: Any, tmp_path: Path) -> None:
    call_command("eval", golden=GOLDEN, arms="hybrid,keyword", json=tmp_path / "r.json", html=tmp_path / "r.html")
    report = json.loads((tmp_path / "r.json").read_text())
    metrics = report["arms"]["hybrid"]["metrics"]
    for key in ["recall@1", "recall@3", "recall@5", "recall@10", "mrr", "ndcg@10", "abstention_precision",
                "abstention_recall", "fact_coverage", "latency_ms_p50", "latency_ms_p95", "page_recall@5", "page_mrr"]:
        assert key in metrics
    assert metrics["recall@5"] == 1.0 and metrics["fact_coverage"] == 1.0
    assert metrics["abstention_recall"] == 1.0 and report["arms"]["hybrid"]["hard_failures"] == []
    case = report["arms"]["hybrid"]["cases"][0]
    assert case["id"] == "d-1" and case["hit_rank"] == 1 and case["retrieved"]
    assert "<svg" in (tmp_path / "r.html").read_text()
    intervals = report["intervals"]  # issue 16: every headline number with its bootstrap interval
    assert intervals["base_arm"] == "hybrid" and intervals["resamples"] == 2000
    for name in ("page_recall@1", "page_recall@5", "page_recall@10", "page_mrr"):
        summary = intervals["arms"]["hybrid"][name]
        assert summary["low"] <= summary["value"] <= summary["high"]
    assert set(intervals["against_base"]["keyword"]) >= {"wins", "losses", "delta"}
    assert "wins" in (tmp_path / "r.html").read_text()


@pytest.mark.django_db
def test_eval_refuses_unknown_arms_and_tenants(demo_corpus: Any, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="unknown arms"):
        call_command("eval", golden=GOLDEN, arms="hybrid,magic")
    with pytest.raises(CommandError, match="does not exist"):
        call_command("eval", golden=GOLDEN, tenant="nobody")


@pytest.mark.django_db
def test_runs_are_stored_shown_in_the_admin_and_deterministic(demo_corpus: Any, tmp_path: Path) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from evaluation.models import EvalRun
    from tenants.rls import staff_tenant_context

    call_command("eval", golden=GOLDEN, arms="hybrid", json=tmp_path / "a.json")
    call_command("eval", golden=GOLDEN, arms="hybrid", json=tmp_path / "b.json")
    first, second = (json.loads((tmp_path / n).read_text())["arms"]["hybrid"] for n in ("a.json", "b.json"))
    strip = lambda m: {k: v for k, v in m.items() if "latency" not in k and not k.startswith("stage_")}  # noqa: E731
    assert strip(first["metrics"]) == strip(second["metrics"])  # two runs, identical metrics
    assert [c.get("hit_rank") for c in first["cases"]] == [c.get("hit_rank") for c in second["cases"]]
    root = get_user_model().objects.create_superuser("root-eval", "r@example.com", "pw")
    client = Client()
    client.force_login(root)
    listing = client.get("/admin/evaluation/evalrun/")
    assert listing.status_code == 200 and b"hybrid" in listing.content
    from tenants.models import Tenant

    with staff_tenant_context([Tenant.objects.get(slug="paylane").id]):
        run = EvalRun.objects.order_by("-id").first()
    assert run is not None
    page = client.get(f"/admin/evaluation/evalrun/{run.pk}/change/")
    assert page.status_code == 200 and b"recall at k per arm" in page.content and b"d-1" in page.content


@pytest.mark.django_db
def test_an_arm_names_its_encoder_and_is_refused_on_another_encoders_index(demo_corpus: Any, tmp_path: Path,
                                                                          settings: Any) -> None:
    """Questions encoded by one runtime against another's vectors would score neither (0060):
    the report says which encoder asked, and a mismatch stops the run before a case is scored."""
    from corpus.encoders.embedding import get_encoder
    from corpus.ingest.store import EncoderMismatch

    call_command("eval", golden=GOLDEN, arms="hybrid", json=tmp_path / "r.json")
    configured = get_encoder().identity
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["arms"]["hybrid"]["encoder"] == configured
    assert report["machine"]["onnxruntime"] and report["machine"]["arch"]  # where it was measured (0068)

    settings.EMBEDDING_BACKEND = "torch" if settings.EMBEDDING_BACKEND != "torch" else "onnx-int8"
    with pytest.raises(EncoderMismatch, match=f"holds vectors of encoder {configured}"):
        call_command("eval", golden=GOLDEN, arms="hybrid", json=tmp_path / "other.json")


def test_a_report_names_the_int8_kernels_its_cpu_offers(tmp_path: Path) -> None:
    """Near-tied pages rank differently with and without VNNI (0068): the flags are read, not assumed."""
    from evaluation.machine import machine_facts

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse avx2 fma\n\n"
                       "processor\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse avx2 fma\n")
    assert machine_facts(cpuinfo)["cpu"] == "AMD EPYC"
    assert machine_facts(cpuinfo)["int8_kernel_flags"] == ["avx2"]
    cpuinfo.write_text("model name\t: Xeon\nflags\t\t: avx2 avx512f avx512_vnni\n")
    assert machine_facts(cpuinfo)["int8_kernel_flags"] == ["avx2", "avx512f", "avx512_vnni"]
    assert machine_facts(tmp_path / "absent")["int8_kernel_flags"] == []
