"""python manage.py eval_sheet --report [LABEL=]REPORT.json ... [--run [LABEL=]TENANT:ID ...]
                               [--arms SIDE,SIDE] [--sample N] [--seed S] --out SHEET.csv [--key KEY.json]

A blind sheet from eval reports already made, several sets in one sheet (docs/decisions/0098):
`--report` reads a report `manage.py eval --json` wrote, `--run` one the runner stored (its
tenant's slug and the run's number, as the admin lists it). A side is an arm of the reports,
or LABEL:ARM when the reports are labelled, so the same arm before and after a change can be
set against itself:

    manage.py eval_sheet --report before=old-pg.json --report before=old-paylane.json \\
        --report after=new-pg.json --report after=new-paylane.json \\
        --arms before:hybrid,after:hybrid --sample 120 --seed 47 --out sheet.csv --key sheet.key.json

Score the rated sheet with `manage.py eval --score sheet.csv --key sheet.key.json`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.models import EvalRun
from evaluation.sheet import DEFAULT_SEED, LabelledReport, SheetError, available_sides, default_key, write_sheet
from tenants.models import Tenant
from tenants.rls import tenant_context


def _labelled(value: str) -> tuple[str, str]:
    """'before=path' → ('before', 'path'); 'path' → ('', 'path')."""
    label, sep, rest = value.partition("=")
    return (label, rest) if sep and label and ":" not in label and "/" not in label else ("", value)


def report_from_file(value: str) -> LabelledReport:
    label, path = _labelled(value)
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CommandError(f"--report {value}: cannot read the report: {exc}") from exc
    if not isinstance(report, dict) or "arms" not in report:
        raise CommandError(f"--report {value}: not an eval report (no arms)")
    return LabelledReport(label, path, report)


def report_from_run(value: str) -> LabelledReport:
    label, reference = _labelled(value)
    slug, _, number = reference.partition(":")
    tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None or not number.isdigit():
        raise CommandError(f"--run {value}: expected TENANT:ID of a stored evaluation run")
    with tenant_context(tenant.id):  # eval runs are tenant rows under row-level security
        run = EvalRun.objects.filter(pk=int(number), tenant=tenant).values("report").first()
    if run is None:
        raise CommandError(f"--run {value}: tenant {slug} has no evaluation run #{number}")
    return LabelledReport(label, f"run {slug}:{number}", run["report"])


class Command(BaseCommand):
    help = "Write a blind, shuffled sheet for a rater from eval reports (several sets), and its key."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--report", action="append", default=[], help="[LABEL=]PATH of an eval --json report")
        parser.add_argument("--run", action="append", default=[], help="[LABEL=]TENANT:ID of a stored run")
        parser.add_argument("--arms", help="the two sides, ARM or LABEL:ARM (default: the reports' only two)")
        parser.add_argument("--sample", type=int, help="this many cases, spread over the sets (default: all)")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
        parser.add_argument("--out", required=True, type=Path, help="the sheet (CSV)")
        parser.add_argument("--key", type=Path, help="the key (default: OUT with .key.json)")

    def handle(self, *args: Any, **options: Any) -> None:
        reports = [report_from_file(v) for v in options["report"]] + [report_from_run(v) for v in options["run"]]
        if not reports:
            raise CommandError("give at least one --report or --run")
        if options["arms"]:
            sides = [s.strip() for s in options["arms"].split(",") if s.strip()]
        else:
            sides = available_sides(reports)
            if len(sides) != 2:
                raise CommandError(f"the reports have sides {sides}; name two with --arms")
        key = options["key"] or default_key(options["out"])
        try:
            written = write_sheet(reports=reports, sides=sides, sheet=options["out"], key=key,
                                  sample=options["sample"], seed=options["seed"])
        except SheetError as exc:
            raise CommandError(str(exc)) from exc
        sets = sorted({item["set"] for item in written["items"].values()})
        self.stdout.write(f"sheet: {options['out']} ({len(written['items'])} items, {len(written['items']) // 2} "
                          f"cases from {', '.join(sets)}); key: {key} (the rater does not open it)")
