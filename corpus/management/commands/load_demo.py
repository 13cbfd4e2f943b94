from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.demo.load import demo_load


class Command(BaseCommand):
    help = "Ingest the committed demo corpus (tenants paylane and helpwise) unless it is loaded already."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="re-ingest even if the tenants exist")

    def handle(self, *args: Any, **options: Any) -> None:
        reports = demo_load(force=options["force"], progress=True, say=lambda m: self.stdout.write(m))
        for report in reports:
            for warning in report.warnings:
                self.stderr.write(f"warning: {warning}")
            for path, reason in report.failed:
                self.stderr.write(self.style.ERROR(f"failed: {path}: {reason}"))
            self.stdout.write(report.summary())
        if any(not r.ok for r in reports):
            raise CommandError("the demo corpus did not load cleanly")
