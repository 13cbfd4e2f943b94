"""python manage.py ingest --tenant SLUG [--create-tenant [--language L]] [--audience A] [--source-type T] [--prune] PATH..."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.ingest.flow import SOURCE_TYPES, ingest_paths
from tenants import actions
from tenants.models import Tenant

# A created tenant's text-search configuration follows its language: PostgreSQL stems English;
# Czech has no PostgreSQL configuration, its keys are computed in Python (docs/decisions/0050),
# so it gets `simple`, as the demo's Czech tenant does (corpus/demo/load.py).
TEXT_SEARCH_CONFIGS = {"en": "english", "cs": "simple"}


class Command(BaseCommand):
    help = "Ingest Markdown, HTML, PDF, text, changelog and ticket files into a tenant's corpus."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--create-tenant", action="store_true", help="create the tenant when it is missing")
        parser.add_argument("--language", choices=sorted(TEXT_SEARCH_CONFIGS),
                            help="language of the tenant --create-tenant creates (default en); an existing"
                                 " tenant must already have it")
        parser.add_argument("--audience", default="public", help="audience of documents that do not name one")
        parser.add_argument("--source-type", default="doc", choices=SOURCE_TYPES)
        parser.add_argument("--prune", action="store_true", help="archive documents that disappeared from a folder")
        parser.add_argument("--manifest", type=Path, help=f"a corpus manifest (conflicts) outside the folders given")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        slug = options["tenant"]
        language = options["language"]
        tenant = Tenant.objects.filter(slug=slug).first()
        if tenant is None and not options["create_tenant"]:
            raise CommandError(f"tenant {slug!r} does not exist (add --create-tenant to create it)")
        if tenant is None:
            language = language or "en"
            tenant = actions.tenant_create(slug=slug, name=slug.replace("-", " ").title(), language=language,
                                           text_search_config=TEXT_SEARCH_CONFIGS[language])
            self.stdout.write(f"Created tenant {slug}." if language == "en" else f"Created tenant {slug} ({language}).")
        elif language and tenant.language != language:
            # Keys are computed for the tenant's language at ingest: documents in another would be
            # keyed wrongly, so a mismatch is refused rather than the tenant silently changed.
            raise CommandError(f"tenant {slug!r} exists with language {tenant.language!r}, not {language!r}")
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
