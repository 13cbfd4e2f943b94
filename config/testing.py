"""pytest plugin (loaded with -p before Django starts): a throwaway embedded database.

The suite commits sentinel rows for its isolation checks, so it must never touch the
developer's `var/pgdata`. This plugin points ANSWERDESK_PGDATA at a fresh temporary
directory before settings load, and removes it when the session ends. Set
ANSWERDESK_TEST_USE_DATABASE_URL=1 to run against DATABASE_URL instead (it must be a
disposable database).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_TMP: Path | None = None

if os.environ.get("ANSWERDESK_TEST_USE_DATABASE_URL") != "1":
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("APP_DATABASE_URL", None)
    if not os.environ.get("ANSWERDESK_TEST_PGDATA"):
        _TMP = Path(tempfile.mkdtemp(prefix="adtest-"))
        os.environ["ANSWERDESK_TEST_PGDATA"] = str(_TMP / "pg")
    os.environ["ANSWERDESK_PGDATA"] = os.environ["ANSWERDESK_TEST_PGDATA"]
    os.environ["ANSWERDESK_TEST_SUPERUSER_ALIAS"] = "1"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("DEBUG", "1")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _TMP is None:
        return
    from config import embedded_db

    embedded_db.stop(Path(os.environ["ANSWERDESK_TEST_PGDATA"]))
    shutil.rmtree(_TMP, ignore_errors=True)
