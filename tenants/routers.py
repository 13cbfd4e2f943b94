"""Route every query to the owner connection while migrations run.

Third-party data migrations (django-tasks-db's among them) use the default manager, which
would go to the application role on a second connection and wait forever on the owner's
open DDL transaction. Outside `migrate` this router has no opinion.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_state = threading.local()


@contextmanager
def migrating_as(alias: str) -> Iterator[None]:
    previous = getattr(_state, "alias", None)
    _state.alias = alias
    try:
        yield
    finally:
        _state.alias = previous


class MigrationRouter:
    def db_for_read(self, model: Any, **hints: Any) -> str | None:
        return getattr(_state, "alias", None)

    def db_for_write(self, model: Any, **hints: Any) -> str | None:
        return getattr(_state, "alias", None)

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        return None

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        return None
