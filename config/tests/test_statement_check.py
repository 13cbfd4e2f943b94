"""The statement recorder and the session check (config/sqlrecorder.py, config/statement_check.py).

The recorder sees the ORM and raw psycopg alike, with placeholders numbered and the code that
sent each statement; the allow-list excuses only what it names; and a run whose statements break a
rule exits non-zero (a pytest run in a subprocess, against this session's server).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connection, connections

from config import sqlrecorder
from config.sqlrecorder import Recorded, Recorder, numbered
from config.statement_check import ALLOWED, check
from tenants.citus_routing import Catalog

ROOT = Path(__file__).resolve().parents[2]
CATALOG = Catalog(distribution={"corpus_chunk": "tenant_id"})


def test_placeholders_become_numbered_parameters() -> None:
    assert numbered(query="SELECT %(a)s, %s, %(a)s, '100%%'", has_params=True) == "SELECT $1, $2, $1, '100%'"
    assert numbered(query="SELECT '100%'", has_params=False) == "SELECT '100%'"


def _recorded(marker: str) -> list[Recorded]:
    recorder = sqlrecorder.active()
    assert recorder is not None, "the plugin records in the test process"
    return [r for r in recorder.records if marker in r.statement]


@pytest.mark.django_db
def test_the_orm_and_raw_psycopg_are_both_recorded_with_their_caller() -> None:
    from tenants.models import Tenant

    list(Tenant.objects.filter(slug="h50-orm"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT %(x)s AS h50_wrapper", {"x": 1})
    params = connections["default"].get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params) as raw:
        raw.execute("SELECT %s AS h50_raw", [1]).fetchall()
    orm = [r for r in _recorded('"tenants_tenant"') if "test_the_orm_and_raw" in r.frames[0]]
    assert orm and 'WHERE "tenants_tenant"."slug" = $1 ' in orm[0].statement, orm
    assert [r.statement for r in _recorded("h50_wrapper")] == ["SELECT $1 AS h50_wrapper"]
    raw_records = _recorded("h50_raw")
    assert [r.statement for r in raw_records] == ["SELECT $1 AS h50_raw"]
    assert raw_records[0].frames[0].startswith("config/tests/test_statement_check.py:")


def test_a_recorder_with_a_sink_writes_each_new_statement_once(tmp_path: Path) -> None:
    recorder = Recorder(sink=tmp_path / "1.jsonl", process="worker")
    for _ in range(3):
        recorder.note(query="SELECT 1", has_params=False, context=None)
    recorder.note(query="SELECT %s", has_params=True, context=None)
    assert [r.statement for r in sqlrecorder.read_directory(tmp_path)] == ["SELECT 1", "SELECT $1"]
    assert recorder.sent == 4


def _record(statement: str, *frames: str, migrating: bool = False, planted: bool = False) -> Recorded:
    return Recorded(statement=statement, frames=frames, migrating=migrating, admin=False, process="test",
                    planted=planted)


def test_the_allow_list_excuses_only_what_it_names() -> None:
    bad = "UPDATE corpus_chunk SET archived = true WHERE id = $1"
    volatile = "DELETE FROM corpus_chunk WHERE tenant_id = $1 AND created_at < clock_timestamp()"
    outcome = check([
        _record(bad, "corpus/ingest/store.py:archive"),  # product code: a violation
        _record(bad, "corpus/tests/test_store.py:test_archive"),  # a test's own statement
        _record(bad, "corpus/migrations/0009_x.py:forwards", migrating=True),
        _record(bad, "corpus/management/commands/reembed.py:handle"),  # an operator's command: across tenants
        _record(volatile, "corpus/management/commands/reembed.py:handle"),  # ...but not a volatile WHERE
        _record(bad, "corpus/ingest/store.py:archive", planted=True),
        _record("SELECT 1 FROM tenants_tenant", "tenants/apikeys.py:lookup"),
    ], CATALOG)
    assert [(r.frames[0], f.rule) for r, f in outcome.violations] == [
        ("corpus/ingest/store.py:archive", "unrouted"), ("corpus/management/commands/reembed.py:handle", "volatile")]
    assert outcome.allowed == {"the tests' own statements": 1, "migrations": 1, "operator commands": 1,
                               "planted by a test": 1}
    assert outcome.statements == 3 and outcome.call_sites == 7
    assert all(a.reason and a.name for a in ALLOWED) and len(ALLOWED) <= 8


PLANTED_TEST = '''
import pytest
from django.db import connection


@pytest.fixture(scope="session")
def django_db_setup():
    """The parent session's server, already migrated."""


@pytest.mark.django_db
def test_sends_one_statement():
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM corpus_chunk WHERE {where}", [1])
'''


def _run_planted(tmp_path: Path, where: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_planted.py"
    test.write_text(PLANTED_TEST.format(where=where), encoding="utf-8")
    # The child reuses this session's server (ANSWERDESK_TEST_PGDATA is set, so it neither
    # creates nor stops one) and its migrated schema; its test file lies outside the repository,
    # so no frame of the statement is test code of ours and nothing excuses it.
    env = {k: v for k, v in os.environ.items() if k != sqlrecorder.ENV_DIR}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
         "-c", str(ROOT / "pytest.ini"), str(test)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.django_db
def test_forced_fail_a_run_that_sends_an_unrouted_statement_exits_non_zero(tmp_path: Path, acme: Any) -> None:
    red = _run_planted(tmp_path, "id = %s")
    assert red.returncode == 1, red.stdout[-3000:]
    assert "1 passed" in red.stdout and "violations: 1" in red.stdout, red.stdout[-3000:]
    assert "VIOLATION unrouted: corpus_chunk not pinned to one tenant_id" in red.stdout
    green = _run_planted(tmp_path, "tenant_id = %s")
    assert green.returncode == 0, green.stdout[-3000:]
    assert "violations: 0" in green.stdout and "distinct statements" in green.stdout, green.stdout[-3000:]
