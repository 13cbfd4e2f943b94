"""python manage.py ingest --tenant SLUG [--create-tenant] [--audience A] [--source-type T] [--prune] PATH..."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.ingest.flow import SOURCE_TYPES, ingest_paths
from tenants import actions
from tenants.models import Tenant


class Command(BaseCommand):
    help = "Ingest Markdown, HTML, PDF, text, changelog and ticket files into a tenant's corpus."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--create-tenant", action="store_true", help="create the tenant when it is missing")
        parser.add_argument("--audience", default="public", help="audience of documents that do not name one")
        parser.add_argument("--source-type", default="doc", choices=SOURCE_TYPES)
        parser.add_argument("--prune", action="store_true", help="archive documents that disappeared from a folder")
        parser.add_argument("--manifest", type=Path, help=f"a corpus manifest (conflicts) outside the folders given")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        slug = options["tenant"]
        if options["create_tenant"]:
            tenant, created = actions.tenant_get_or_create(slug=slug)
            if created:
                self.stdout.write(f"Created tenant {slug}.")
        else:
            found = Tenant.objects.filter(slug=slug).first()
            if found is None:
                raise CommandError(f"tenant {slug!r} does not exist (add --create-tenant to create it)")
            tenant = found
        try:
            report = ingest_paths(
                tenant=tenant, paths=options["paths"], audience=options["audience"],
                source_type=options["source_type"], prune=options["prune"], manifest=options["manifest"],
                progress=not options["no_progress"], say=lambda m: self.stderr.write(m),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2, default=str))
        else:
            for warning in report.warnings:
                self.stderr.write(f"warning: {warning}")
            for path, reason in report.failed:
                self.stderr.write(self.style.ERROR(f"failed: {path}: {reason}"))
            self.stdout.write(report.summary())
        if not report.ok:
            raise CommandError(f"{len(report.failed)} file(s) failed; everything else was ingested")
