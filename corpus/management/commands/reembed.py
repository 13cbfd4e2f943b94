"""python manage.py reembed (--tenant SLUG | --all) [--window N]: re-encode vectors with this process's encoder,
then rewrite int8 token states in 4 bits (docs/decisions/0065)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.config import IngestConfig
from corpus.ingest.reembed import reembed_tenant, repack_tenant
from tenants.models import Tenant


class Command(BaseCommand):
    help = ("Re-encode a tenant's chunk vectors (or every tenant's, --all) with the configured encoder "
            "(EMBEDDING_BACKEND), and store the token states of chunks that have none (INGEST_TOKEN_STATES), "
            "one window per transaction; safe to kill and run again. A tenant whose vectors are all the "
            "configured encoder's, with their states, is left alone. With INGEST_TOKEN_STATES_BITS=4, "
            "int8 states stored before docs/decisions/0065 are then rewritten in 4 bits, without the encoder.")

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--tenant", help="the tenant's slug")
        # `make run` calls --all after a change of EMBEDDING_BACKEND's default (docs/decisions/0060),
        # so an existing install keeps ingesting instead of refusing a mixed tenant.
        which.add_argument("--all", action="store_true", help="every tenant that holds another encoder's vectors or lacks token states, "
                                                                 "evaluation shadows excepted")
        parser.add_argument("--window", type=int, default=512, help="chunks per transaction")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["window"] < 1:
            raise CommandError("--window must be at least 1")
        if options["all"]:
            # An evaluation shadow is re-encoded by the eval when its arm next runs (0070): `make
            # run` need not spend the time on indexes nobody asks.
            tenants = list(Tenant.objects.filter(shadow_of__isnull=True).order_by("slug"))
            shadows = Tenant.objects.filter(shadow_of__isnull=False).count()
            if shadows:
                self.stdout.write(f"left {shadows} evaluation shadow(s) alone: each is re-encoded when its arm runs")
        else:
            tenant = Tenant.objects.filter(slug=options["tenant"]).first()
            if tenant is None:
                raise CommandError(f"tenant {options['tenant']!r} does not exist")
            tenants = [tenant]
        config = IngestConfig.from_settings()
        for tenant in tenants:
            report = reembed_tenant(tenant=tenant, window=options["window"], progress=not options["no_progress"],
                                    config=config)
            if report.chunks or not options["all"]:
                self.stdout.write(report.summary())
            if config.token_states and config.token_states_bits == 4:
                repacked = repack_tenant(tenant=tenant, window=options["window"])
                if repacked.chunks or repacked.unreadable:
                    self.stdout.write(repacked.summary())
