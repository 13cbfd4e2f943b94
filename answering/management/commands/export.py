"""python manage.py export --tenant SLUG --contact EMAIL [--output FILE]"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from answering.handoff.retention import export_contact
from tenants.models import Tenant


class Command(BaseCommand):
    help = "Write everything a tenant holds about one person (by the email they left) as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--contact", required=True)
        parser.add_argument("--output", help="a file to write (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"no tenant {options['tenant']!r}")
        text = json.dumps(export_contact(tenant=tenant, email=options["contact"]), ensure_ascii=False, indent=2)
        if options.get("output"):
            Path(options["output"]).write_text(text + "\n", encoding="utf-8")
            self.stdout.write(f"Wrote {options['output']}")
        else:
            self.stdout.write(text)
