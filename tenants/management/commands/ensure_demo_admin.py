"""On a development install, create the demo superuser when none exists and print its
generated password, once (tenants/demoadmin.py); with DEBUG off, create nobody and say so."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from tenants.demoadmin import DEMO_ADMIN_USERNAME, demo_admin_ensure


class Command(BaseCommand):
    help = "Development mode only: create a demo superuser with a generated password when none exists."

    def handle(self, *args: Any, **options: Any) -> None:
        made = demo_admin_ensure(development=settings.DEBUG, username=DEMO_ADMIN_USERNAME)
        if made.outcome == "production":
            self.stdout.write("No demo superuser: DEBUG is off. Create one with `manage.py createsuperuser`.")
        elif made.outcome == "exists":
            self.stdout.write("A superuser exists; leaving accounts alone.")
        else:
            self.stdout.write(self.style.SUCCESS(
                f"Demo superuser created: username {made.username!r}, password: {made.password}\n"
                "  Shown this once and stored only as a hash; note it now (or set another with "
                f"`manage.py changepassword {made.username}`)."))
