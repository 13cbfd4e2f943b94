"""python manage.py eval --golden FILE [--tenant SLUG] [--arms a,b] [--k 1,3,5,10] [--json OUT] [--html OUT]"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.arms import ARMS, DEFAULT_ARMS
from evaluation.golden import GoldenError, load_golden
from evaluation.report import render_html
from evaluation.runner import eval_run_store, run_eval
from tenants.models import Tenant


class Command(BaseCommand):
    help = "Run a golden set against a tenant, arm by arm, and report metrics side by side."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--golden", required=True, type=Path)
        parser.add_argument("--tenant", help="defaults to the set's own tenant")
        parser.add_argument("--arms", default=",".join(DEFAULT_ARMS), help=f"comma list of: {', '.join(ARMS)}")
        parser.add_argument("--k", default="1,3,5,10")
        parser.add_argument("--json", type=Path)
        parser.add_argument("--html", type=Path)
        parser.add_argument("--no-store", action="store_true", help="do not keep the run in the database")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            golden = load_golden(options["golden"])
        except GoldenError as exc:
            raise CommandError(str(exc)) from exc
        slug = options["tenant"] or golden.tenant
        tenant = Tenant.objects.filter(slug=slug).first()
        if tenant is None:
            raise CommandError(f"tenant {slug!r} does not exist (ingest its corpus first)")
        arms = [a.strip() for a in options["arms"].split(",") if a.strip()]
        unknown = [a for a in arms if a not in ARMS]
        if unknown:
            raise CommandError(f"unknown arms {unknown}; known: {', '.join(ARMS)}")
        try:
            ks = [int(k) for k in options["k"].split(",")]
        except ValueError as exc:
            raise CommandError(f"--k must be a comma list of integers, got {options['k']!r}") from exc
        report = run_eval(golden=golden, tenant=tenant, arms=arms, ks=ks, progress=True, say=self.stdout.write)
        for error in report["errors"]:
            self.stderr.write(self.style.ERROR(f"set error: {error}"))
        width = max(len(a) for a in arms)
        keys = [f"recall@{k}" for k in ks] + [f"page_recall@{k}" for k in ks] + [
            "mrr", "page_mrr", "ndcg@10", "abstention_precision", "abstention_recall", "fact_coverage", "latency_ms_p50",
            "judge_faithfulness", "judge_citation_support"]
        self.stdout.write(" " * (width + 2) + "  ".join(f"{k:>10}" for k in keys))
        for arm, data in report["arms"].items():
            values = "  ".join(f"{_fmt(data['metrics'].get(k)):>10}" for k in keys)
            self.stdout.write(f"{arm:<{width}}  {values}")
            if data.get("skipped"):
                self.stdout.write(f"  {arm}: {data['skipped']}")
            for failure in data["hard_failures"]:
                self.stderr.write(self.style.ERROR(f"  hard failure [{arm}]: {failure}"))
        self.stdout.write(f"judge: {report['judge']['note']}")
        if not options["no_store"]:
            run = eval_run_store(tenant=tenant, report=report)
            self.stdout.write(f"stored as evaluation run #{run.pk} (admin: Evaluation › Eval runs)")
        if options["json"]:
            options["json"].write_text(json.dumps(report, indent=2, default=str) + "\n")
        if options["html"]:
            options["html"].write_text(render_html(report))


def _fmt(value: object) -> str:
    if value is None:
        return "skipped"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
