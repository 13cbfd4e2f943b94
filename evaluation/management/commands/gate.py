"""python manage.py gate [--golden FILE ...] [--write-baseline]: fail closed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.gate import TOLERANCE, run_gate, write_baseline
from evaluation.golden import GoldenError, load_golden
from tenants.models import Tenant

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "golden"
# Both demo tenants: helpwise fails closed on helpwise-a004 until the offline answerer can tell a
# question about a missing feature from one about a present one (docs/decisions/0023).
DEFAULT_GOLDEN = [GOLDEN_DIR / "demo-paylane.yaml", GOLDEN_DIR / "demo-helpwise.yaml"]


class Command(BaseCommand):
    help = "Run the evaluation gate: hard assertions and quality against the committed baseline."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--golden", type=Path, action="append")
        parser.add_argument("--tolerance", type=float, default=TOLERANCE)
        parser.add_argument("--write-baseline", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        failed = []
        for path in options["golden"] or DEFAULT_GOLDEN:
            try:
                golden = load_golden(path)
            except GoldenError as exc:
                raise CommandError(str(exc)) from exc
            tenant = Tenant.objects.filter(slug=golden.tenant).first()
            if tenant is None:
                raise CommandError(f"tenant {golden.tenant!r} does not exist: a gate that did not run has failed")
            result = run_gate(golden=golden, tenant=tenant, tolerance=options["tolerance"])
            self.stdout.write(f"gate: {path.name}")
            for name, check in result.checks.items():
                state = "pass" if check["ran"] and check["passed"] else ("DID NOT RUN" if not check["ran"] else "FAIL")
                self.stdout.write(f"  {state:>11}  {name} {check['detail'] if state != 'pass' else ''}")
            for name, quality in result.quality.items():
                state = "pass" if quality["passed"] else "FAIL"
                self.stdout.write(f"  {state:>11}  {name}: {quality.get('before')} -> {quality.get('now')}")
            for message in result.messages:
                self.stdout.write(f"  note: {message}")
            if options["write_baseline"]:
                self.stdout.write(f"  baseline written: {write_baseline(golden, result.metrics)}")
            if not result.passed:
                failed.append(path.name)
        if failed:
            raise CommandError(f"gate failed for {', '.join(failed)}")
        self.stdout.write(self.style.SUCCESS("gate passed"))
