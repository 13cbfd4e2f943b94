"""python manage.py reembed --tenant SLUG [--window N]: re-encode a tenant's vectors with this process's encoder."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.reembed import reembed_tenant
from tenants.models import Tenant


class Command(BaseCommand):
    help = ("Re-encode a tenant's chunk vectors with the configured encoder (EMBEDDING_BACKEND), one window "
            "per transaction; safe to kill and run again.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--window", type=int, default=512, help="chunks per transaction")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"tenant {options['tenant']!r} does not exist")
        if options["window"] < 1:
            raise CommandError("--window must be at least 1")
        report = reembed_tenant(tenant=tenant, window=options["window"], progress=not options["no_progress"])
        self.stdout.write(report.summary())
