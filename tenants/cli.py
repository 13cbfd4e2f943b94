"""Who reads, on the command line: `--tenant` and `--audience` of `manage.py search` and `ask`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.management.base import CommandError, CommandParser

from tenants.models import Tenant


def add_reader_arguments(parser: CommandParser) -> None:
    parser.add_argument("--tenant", required=True)
    parser.add_argument("--audience", action="append", help="audience slug (repeatable); default public")


def reader_from(options: Mapping[str, Any]) -> tuple[Tenant, list[str]]:
    """The tenant and the audience slugs a command reads as; an unknown tenant stops it."""
    tenant = Tenant.objects.filter(slug=options["tenant"]).first()
    if tenant is None:
        raise CommandError(f"tenant {options['tenant']!r} does not exist")
    return tenant, options["audience"] or ["public"]
