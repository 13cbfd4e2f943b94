"""Create the demo superuser when no superuser exists, and print how to sign in."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create a demo superuser when none exists (make run uses this)."

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        if User.objects.filter(is_superuser=True).exists():
            self.stdout.write("A superuser exists; leaving accounts alone.")
            return
        User.objects.create_superuser(
            username=settings.DEMO_ADMIN_USERNAME, email="admin@example.com", password=settings.DEMO_ADMIN_PASSWORD
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo superuser created: username {settings.DEMO_ADMIN_USERNAME!r}, "
                f"password {settings.DEMO_ADMIN_PASSWORD!r} (change it before exposing this server)."
            )
        )
