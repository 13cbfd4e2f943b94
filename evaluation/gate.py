"""The fail-closed gate: hard assertions, quality against a committed baseline, and proof that
the checks can fail at all.

1. A deliberately failing case runs first (an answered question relabelled must-abstain);
   the hard-assertion checker must flag it, or the gate fails: a checker that cannot fail is
   worth nothing.
2. Every expected check must run and pass; a check with no cases to run on has failed.
3. Quality metrics fail on a relative drop over the tolerance against the baseline;
   improvements never fail; no baseline is a pass, said out loud.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evaluation.golden import GoldenSet
from evaluation.runner import run_arm
from tenants.models import Tenant

BASELINE_DIR = Path(__file__).resolve().parent / "baselines"
QUALITY_METRICS = ("recall@5", "page_recall@5", "mrr", "ndcg@10", "fact_coverage", "abstention_recall")
TOLERANCE = 0.05
CHECKS = {
    "no_cross_tenant_retrieval": ("tenant_probe", "tenant_probe retrieved"),
    "no_cross_audience_retrieval": ("audience_probe", "audience_probe retrieved"),
    "no_archived_document_cited": ("stale", "cited archived"),
    "no_must_abstain_answered": ("must_abstain", "must-abstain case was answered"),
    "no_golden_question_intercepted": (None, "intercepted as a greeting"),
    "no_forbidden_text": (None, "forbidden text"),
}


@dataclass
class GateResult:
    golden: str
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    quality: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)  # the run's, for a new baseline

    @property
    def passed(self) -> bool:
        return all(c["ran"] and c["passed"] for c in self.checks.values()) and all(
            q["passed"] for q in self.quality.values())


def baseline_path(golden: GoldenSet) -> Path:
    return BASELINE_DIR / f"{Path(golden.path).stem}.json"


def self_test(golden: GoldenSet, tenant: Tenant, answered_case_id: str) -> bool:
    """Ask an answerable question labelled must-abstain: the checker must call it a failure."""
    case = next(c for c in golden.cases if c.id == answered_case_id)
    broken = replace(golden, cases=(replace(case, id=f"{case.id}-forced", type="must_abstain", expected=()),))
    report, _ = run_arm(golden=broken, tenant=tenant, arm="hybrid")
    return any("must-abstain case was answered" in f for f in report.hard_failures)


def run_gate(*, golden: GoldenSet, tenant: Tenant, tolerance: float = TOLERANCE) -> GateResult:
    result = GateResult(golden=golden.path)
    report, errors = run_arm(golden=golden, tenant=tenant, arm="hybrid")
    if errors:
        result.checks["golden_set_resolves"] = {"ran": True, "passed": False, "detail": errors}
    answered = [c["id"] for c in report.cases if c.get("action") == "answered"]
    can_fail = bool(answered) and self_test(golden, tenant, answered[0])
    result.checks["checker_can_fail"] = {"ran": bool(answered), "passed": can_fail,
                                         "detail": "a forced must-abstain answer was flagged" if can_fail else
                                         "the forced failure was NOT flagged"}
    types = {c["type"] for c in report.cases}
    for name, (case_type, marker) in CHECKS.items():
        ran = case_type in types if case_type else any("action" in c for c in report.cases)
        failures = [f for f in report.hard_failures if marker in f]
        result.checks[name] = {"ran": ran, "passed": ran and not failures, "detail": failures}
    greetings = [c for c in report.cases if c["type"] == "greeting"]
    result.checks["greetings_recognised"] = {"ran": bool(greetings), "passed": bool(greetings) and all(
        c["passed"] for c in greetings), "detail": [c["id"] for c in greetings if not c["passed"]]}
    path = baseline_path(golden)
    if not path.exists():
        result.messages.append(f"no baseline at {path}: quality is not compared (a pass, said out loud)")
    else:
        baseline = json.loads(path.read_text())["metrics"]
        for metric in QUALITY_METRICS:
            before, now = baseline.get(metric), report.metrics.get(metric)
            if before is None or now is None:
                result.quality[metric] = {"passed": now is not None or before is None, "before": before, "now": now}
                continue
            drop = (before - now) / before if before else 0.0
            result.quality[metric] = {"passed": drop <= tolerance, "before": before, "now": now,
                                      "relative_change": round(-drop, 4)}
    result.metrics = report.metrics
    return result


def write_baseline(golden: GoldenSet, metrics: dict[str, Any]) -> Path:
    path = baseline_path(golden)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"golden": Path(golden.path).name, "arm": "hybrid",
                                "metrics": {k: metrics.get(k) for k in QUALITY_METRICS}}, indent=2) + "\n")
    return path
