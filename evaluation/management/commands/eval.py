"""python manage.py eval --golden FILE [--tenant SLUG] [--arms a,b] [--k 1,3,5,10] [--json OUT] [--html OUT]
                          [--sheet SHEET.csv [--key KEY.json] [--sample N] [--seed S]]
   python manage.py eval --score SHEET.csv [--key KEY.json] [--json OUT]

--sheet writes the two arms' answers as a blind, shuffled sheet for a rater and its key;
--score joins the rated sheet back through the key (docs/reader-rubric.md, evaluation/sheet.py).
A sheet of several sets or of stored reports: manage.py eval_sheet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.arms import ARMS, DEFAULT_ARMS
from evaluation.golden import GoldenError, load_golden
from evaluation.report import render_html
from evaluation.runner import eval_run_store, run_eval
from evaluation.sheet import DEFAULT_SEED, LabelledReport, SheetError, default_key, score_lines, score_sheet, write_sheet
from tenants.models import Tenant


class Command(BaseCommand):
    help = "Run a golden set against a tenant, arm by arm, and report metrics side by side."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--golden", type=Path, help="required, except with --score")
        parser.add_argument("--tenant", help="defaults to the set's own tenant")
        parser.add_argument("--arms", default=",".join(DEFAULT_ARMS), help=f"comma list of: {', '.join(ARMS)}")
        parser.add_argument("--k", default="1,3,5,10")
        parser.add_argument("--json", type=Path)
        parser.add_argument("--html", type=Path)
        parser.add_argument("--no-store", action="store_true", help="do not keep the run in the database")
        parser.add_argument("--sheet", type=Path, help="write a blind sheet of the two arms' answers for a rater")
        parser.add_argument("--key", type=Path, help="the sheet's key (default: SHEET with .key.json)")
        parser.add_argument("--sample", type=int, help="rate this many cases (default: every asked case)")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the sample's and the shuffle's seed")
        parser.add_argument("--score", type=Path, help="score a rated sheet through its key (runs nothing)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["score"]:
            self._score(options)
            return
        if options["golden"] is None:
            raise CommandError("--golden is required (or --score SHEET to score a rated sheet)")
        if options["sheet"] and len([a for a in options["arms"].split(",") if a.strip()]) != 2:
            raise CommandError(f"--sheet compares exactly two arms; --arms is {options['arms']!r}")
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
            "mrr", "page_mrr", "ndcg@10", "abstention_precision", "abstention_recall", "fact_coverage",
            "answer_precision", "turn_contamination", "noise_rate", "latency_ms_p50",
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
        if options["sheet"]:
            self._sheet(report, arms, options)

    def _sheet(self, report: dict[str, Any], arms: list[str], options: dict[str, Any]) -> None:
        key = options["key"] or default_key(options["sheet"])
        try:
            written = write_sheet(reports=[LabelledReport("", str(options["golden"]), report)], sides=arms,
                                  sheet=options["sheet"], key=key, sample=options["sample"], seed=options["seed"])
        except SheetError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"sheet: {options['sheet']} ({len(written['items'])} items); key: {key} "
                          "(the rater does not open it)")

    def _score(self, options: dict[str, Any]) -> None:
        key = options["key"] or default_key(options["score"])
        try:
            result = score_sheet(sheet=options["score"], key_path=key)
        except SheetError as exc:
            raise CommandError(str(exc)) from exc
        for line in score_lines(result):
            self.stdout.write(line)
        if options["json"]:
            options["json"].write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")


def _fmt(value: object) -> str:
    if value is None:
        return "skipped"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
