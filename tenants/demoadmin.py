"""The demo superuser `make run` offers on a development install, and only there.

A fixed password shared by every install is a password every reader of the README knows, so
the password is generated here, per install, and handed back once for the command to print;
only its hash is stored. With DEBUG off nobody is created: a production install makes its
superuser with `manage.py createsuperuser`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction


# The name `make run` gives the demo superuser (the README and the command's output say it).
DEMO_ADMIN_USERNAME = "admin"


@dataclass(frozen=True)
class DemoAdmin:
    """What `demo_admin_ensure` did: `password` is set only when the account was just made."""

    outcome: str  # "created" | "exists" | "production"
    username: str = ""
    password: str = ""


def demo_admin_ensure(*, development: bool, username: str) -> DemoAdmin:
    """Create the demo superuser `username` with a fresh random password when `development`
    is on and no superuser exists yet; otherwise change nothing and say why."""
    if not development:
        return DemoAdmin(outcome="production")
    User = get_user_model()
    with transaction.atomic():
        if User.objects.filter(is_superuser=True).exists():
            return DemoAdmin(outcome="exists")
        password = secrets.token_urlsafe(18)  # 144 bits, 24 characters, no shell-special ones
        User.objects.create_superuser(username=username, email="", password=password)
    return DemoAdmin(outcome="created", username=username, password=password)
