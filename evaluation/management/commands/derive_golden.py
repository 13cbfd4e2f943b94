"""python manage.py derive_golden --tenant SLUG [--output FILE]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.derive import derive_for

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "golden"
HEADER = ("# Derived by `manage.py derive_golden --tenant {slug}` from corpus/demo/facts/{slug}.yaml (the\n"
          "# declared facts); may be edited by hand, re-deriving overwrites it. corpus/tests/test_demo_facts.py\n"
          "# holds every case to the declared facts. Format: GOLDEN_FORMAT.md.\n")


class Command(BaseCommand):
    help = "Derive a golden set for a demo tenant from its declared facts and documents."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--output", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            data = derive_for(options["tenant"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        output = options["output"] or GOLDEN_DIR / f"demo-{options['tenant']}.yaml"
        output.parent.mkdir(parents=True, exist_ok=True)
        body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)
        output.write_text(HEADER.format(slug=options["tenant"]) + body)
        counts: dict[str, int] = {}
        for case in data["cases"]:
            counts[case["type"]] = counts.get(case["type"], 0) + 1
        self.stdout.write(f"wrote {output}: " + ", ".join(f"{n} {t}" for t, n in counts.items()))
