"""python manage.py generate_demo [--output DIR] [--strict]: write the demo corpus and check its facts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.demo.generate import DEFAULT_OUTPUT, generate


class Command(BaseCommand):
    help = "Generate the demo corpus (docs, changelog, tickets, manifest per tenant) from corpus/demo/spec*.py."
    # Pure file generation: it must run without a reachable or migrated database.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help=f"default: {DEFAULT_OUTPUT}")
        parser.add_argument("--strict", action="store_true", help="exit with an error when the fact check warns")

    def handle(self, *args: Any, **options: Any) -> None:
        report = generate(options["output"])
        for tenant in report.tenants:
            self.stdout.write(
                f"{tenant.slug}: {tenant.documents} documents ({tenant.docs} docs, {tenant.changelog} changelog, "
                f"{tenant.tickets} tickets; {tenant.public} public, {tenant.customer} customer, "
                f"{tenant.internal} internal; doc words {tenant.min_doc_words}-{tenant.max_doc_words})"
            )
        for path in report.removed:
            self.stdout.write(f"removed stale {path}")
        self.stdout.write(f"Wrote {len(report.written)} files under {report.output_dir}.")
        for warning in report.warnings:
            self.stderr.write(self.style.WARNING(f"warning: {warning}"))
        if report.warnings:
            message = f"{len(report.warnings)} fact check warning(s)"
            if options["strict"]:
                raise CommandError(message)
            self.stderr.write(self.style.WARNING(message))
        else:
            self.stdout.write(self.style.SUCCESS("Every declared fact appears verbatim under its heading."))
