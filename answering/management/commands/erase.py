"""python manage.py erase --tenant SLUG --contact EMAIL"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from answering.handoff.retention import erase_contact
from tenants.models import Tenant


class Command(BaseCommand):
    help = ("Erase one person's questions, conversations, thread messages, webhook events, cache entries and "
            "contact from a tenant (docs/decisions/0046).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--contact", required=True, help="the email address the person left")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"no tenant {options['tenant']!r}")
        try:
            report = erase_contact(tenant=tenant, email=options["contact"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Erased {report.summary()}.")
