"""What every benchmark script does before it measures: put the project on the path, point
Django at a database, start it.

The scripts import this as a sibling module (`python bench/<name>.py` puts bench/ on sys.path).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def measured_or_replayed(*, out: str, replay: bool, measure: Callable[[], Any], indent: int | None = 1) -> Any:
    """The rows a replay script fits: read back from `out` with --replay; otherwise measured
    against the developer database and written to `out` first."""
    if replay:
        return json.loads(Path(out).read_text())
    start_django(own_database=False, migrate=False)
    rows = measure()
    Path(out).write_text(json.dumps(rows, indent=indent))
    return rows
