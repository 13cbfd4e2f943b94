"""What every benchmark script does before it measures: put the project on the path, point
Django at a database, start it.

The scripts import this as a sibling module (`python bench/<name>.py` puts bench/ on sys.path).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start_django(*, own_database: bool, migrate: bool) -> None:
    """Set Django up; the embedded server is started unless DATABASE_URL names another one.

    own_database: the bench's own embedded database (var/bench-pgdata), so a synthetic corpus
    never lands in the product's; otherwise the developer database (var/pgdata).
    """
    sys.path.insert(0, str(ROOT))
    if own_database:
        os.environ.setdefault("ANSWERDESK_PGDATA", str(ROOT / "var" / "bench-pgdata"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from config.embedded_db import ensure_running

    if not os.environ.get("DATABASE_URL"):
        ensure_running()
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
