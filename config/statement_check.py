"""pytest plugin: every SQL statement the suite sends, checked against Citus's rules at the end.

Loaded for every run from pytest.ini (`-p config.statement_check`, docs/decisions/0120). It
records each distinct statement template and the code that sent it (config/sqlrecorder.py), in
this process and in the app and worker processes the tests start; when the session ends it reads
which tables are distributed from the migrated catalog (tenants.distribution) and the volatility
of every function from pg_proc, applies tenants.citus_routing to each statement that touches a
distributed table, prints how many were checked, and fails the run on any finding the allow-list
below does not name. `--statement-report=PATH` writes every statement, its call sites and its
findings as JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pglast.parser import fingerprint

from config import sqlrecorder
from config.sqlrecorder import Recorded, numbered
from tenants.citus_routing import SQL_VALUE_FUNCTIONS, Catalog, Finding, findings, relations


@dataclass(frozen=True)
class Allowance:
    """A named exception: which statements, which rules, and why Citus's behaviour is acceptable."""

    name: str
    reason: str
    rules: frozenset[str]  # the finding rules it excuses
    applies: Callable[[Recorded], bool]


def _innermost(record: Recorded) -> str:
    return record.frames[0].rsplit(":", 1)[0] if record.frames else ""


def _is_test_code(path: str) -> bool:
    return "/tests/" in f"/{path}" or path.endswith("conftest.py") or path in (
        "config/testing.py", "config/liveserver.py")


def _called_from(*functions: str) -> Callable[[Recorded], bool]:
    return lambda record: any(frame in functions for frame in record.frames)


def _sweeps() -> frozenset[str]:
    from tenants.ratelimit import _SWEEP

    return frozenset({numbered(query=_SWEEP, has_params=True)})


_SWEEPS = _sweeps()
ALL_RULES = frozenset({"unrouted", "join", "volatile", "irreducible", "mutable", "modifying-cte", "unparsed"})
ACROSS_TENANTS = frozenset({"unrouted"})

ALLOWED: tuple[Allowance, ...] = (
    Allowance(
        name="planted by a test",
        reason="A test that proves a check goes red sends a bad statement on purpose; it is marked "
               "@pytest.mark.planted_sql, and only the statements sent while it runs are excused.",
        rules=ALL_RULES, applies=lambda record: record.planted),
    Allowance(
        name="migrations",
        reason="Schema and data migrations run once per release as the owner on the coordinator; "
               "Citus propagates their DDL, and their data steps ran before any table was distributed.",
        rules=ALL_RULES, applies=lambda record: record.migrating),
    Allowance(
        name="the tests' own statements",
        reason="Fixtures and assertions read and write across tenants on purpose (that is how isolation "
               "is proved); the product never sends them. The first frame of ours is a test module.",
        rules=ALL_RULES, applies=lambda record: _is_test_code(_innermost(record))),
    Allowance(
        name="the admin's pages",
        reason="Django's admin (the staff console) lists and opens rows of every tenant a superuser, or of "
               "the several tenants a member belongs to: one multi-shard read per page, run on the shards "
               "in parallel (docs/scaling.md, section 4). Its joins must still pair tenant_id.",
        rules=ACROSS_TENANTS, applies=lambda record: record.admin),
    Allowance(
        name="sweeps of ended rows",
        reason="Deleting every bucket's ended rate-limit windows is a multi-shard DELETE on purpose; it is "
               "accepted by Citus because the time is a parameter, not clock_timestamp().",
        rules=ACROSS_TENANTS, applies=lambda record: record.statement in _SWEEPS),
    Allowance(
        name="operator commands",
        reason="A management command an operator runs by hand (load_demo, reembed --all, distribute, ...): "
               "across tenants by design, a multi-shard statement Citus runs in parallel on every shard.",
        rules=ACROSS_TENANTS,
        applies=lambda record: any("/management/commands/" in f"/{frame}" for frame in record.frames)),
)


def allowance_for(record: Recorded, finding: Finding,
                  allowed: tuple[Allowance, ...] = ALLOWED) -> Allowance | None:
    for allowance in allowed:
        if finding.rule in allowance.rules and allowance.applies(record):
            return allowance
    return None


@dataclass
class Outcome:
    statements: int  # distinct statements checked: texts that differ only in constants count once
    call_sites: int  # distinct (statement, call site) pairs
    distributed: int  # distinct statements touching a distributed table
    violations: list[tuple[Recorded, Finding]]
    allowed: Counter[str]
    report: list[dict[str, Any]]


def check(records: list[Recorded], catalog: Catalog,
          allowed: tuple[Allowance, ...] = ALLOWED) -> Outcome:
    """Apply the rules to every record; a finding is a violation unless an allowance names it."""
    cache: dict[str, list[Finding]] = {}
    violations: list[tuple[Recorded, Finding]] = []
    counts: Counter[str] = Counter()
    report: list[dict[str, Any]] = []
    distributed: set[str] = set()
    shapes: dict[str, str] = {}
    for record in records:
        if record.statement not in cache:
            cache[record.statement] = findings(statement=record.statement, catalog=catalog)
            shapes[record.statement] = _fingerprint(record.statement)
        found = cache[record.statement]
        entry: dict[str, Any] = {"statement": record.statement, "frames": list(record.frames),
                                 "process": record.process, "findings": []}
        for finding in found:
            allowance = allowance_for(record, finding, allowed)
            entry["findings"].append({"finding": str(finding), "allowed": allowance.name if allowance else None})
            if allowance is None:
                violations.append((record, finding))
            else:
                counts[allowance.name] += 1
        if found or _touches(record.statement, catalog.distribution):
            distributed.add(shapes[record.statement])
        report.append(entry)
    return Outcome(statements=len(set(shapes.values())), call_sites=len(records), distributed=len(distributed),
                   violations=violations, allowed=counts, report=report)


def _fingerprint(statement: str) -> str:
    """PostgreSQL's own query fingerprint (constants and placeholders ignored), or the text."""
    try:
        return str(fingerprint(statement))
    except Exception:  # noqa: BLE001 - unparsable: its text is its identity
        return statement


def _touches(statement: str, distribution: Mapping[str, str]) -> bool:
    return bool(relations(statement) & set(distribution))


# --- the catalog ------------------------------------------------------------------------------
_VOLATILITY = """
SELECT proname, bool_and(provolatile = 'v'), bool_and(provolatile <> 'i')
FROM pg_proc GROUP BY proname
"""


def read_catalog(cursor: Any) -> Catalog:
    from tenants.distribution import distribution_of, read_schema

    schema = read_schema(cursor)
    distribution = {name: column for name, table in schema.tables.items()
                    if (column := distribution_of(table)) is not None}
    cursor.execute(_VOLATILITY)
    rows = cursor.fetchall()
    return Catalog(distribution=distribution, volatile=frozenset(n for n, v, _ in rows if v),
                   mutable=frozenset(n for n, _, m in rows if m) | SQL_VALUE_FUNCTIONS)


# --- pytest hooks -------------------------------------------------------------------------------
_DIRECTORY: Path | None = None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("statement check")
    group.addoption("--statement-report", metavar="PATH", default=None,
                    help="write every recorded statement, its call sites and its Citus findings as JSON")
    group.addoption("--statement-dir", metavar="DIR", default=None,
                    help="keep the recorded statements (one JSON line each) in DIR; `python -m "
                         "config.statement_check DIR` checks them again without a test run")
    group.addoption("--no-statement-check", action="store_true", default=False,
                    help="do not record statements nor apply the Citus rules at the end")


def pytest_configure(config: pytest.Config) -> None:
    global _DIRECTORY
    config.addinivalue_line("markers", "planted_sql: the test sends statements that break Citus's rules on "
                                       "purpose (a forced fail); the statement check excuses them")
    if config.getoption("--no-statement-check") or hasattr(config, "workerinput"):
        return
    kept = config.getoption("--statement-dir")
    _DIRECTORY = Path(kept) if kept else Path(tempfile.mkdtemp(prefix="adsql-"))
    _DIRECTORY.mkdir(parents=True, exist_ok=True)
    os.environ[sqlrecorder.ENV_DIR] = str(_DIRECTORY)
    # Written as they come, like the other processes': a run stopped halfway still leaves them.
    sqlrecorder.install(sink=_DIRECTORY / f"test-{os.getpid()}.jsonl", process="test")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    recorder = sqlrecorder.active()
    planted = item.get_closest_marker("planted_sql") is not None
    if recorder is not None:
        recorder.planted = planted
    try:
        return (yield)
    finally:
        if recorder is not None:
            recorder.planted = False


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    recorder = sqlrecorder.active()
    if recorder is None or _DIRECTORY is None:
        return
    sent = recorder.sent
    records = sqlrecorder.read_directory(_DIRECTORY)
    sqlrecorder.uninstall()
    os.environ.pop(sqlrecorder.ENV_DIR, None)
    if not session.config.getoption("--statement-dir"):
        shutil.rmtree(_DIRECTORY, ignore_errors=True)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    write = reporter.write_line if reporter is not None else print
    if not records:
        return
    catalog = _catalog(session.config)
    if catalog is None:
        write("citus statement check: no catalog to read (no database was set up); nothing checked")
        return
    outcome = check(records, catalog)
    if path := session.config.getoption("--statement-report"):
        Path(path).write_text(json.dumps(outcome.report, indent=1), encoding="utf-8")
    summary(outcome, write=write, sent=sent)
    if outcome.violations and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def summary(outcome: Outcome, *, write: Callable[[str], Any], sent: int | None = None) -> None:
    allowed = ", ".join(f"{name} {count}" for name, count in sorted(outcome.allowed.items())) or "none"
    sent_note = f"; {sent} sent by the test process" if sent is not None else ""
    write(f"citus statement check: {outcome.statements} distinct statements from {outcome.call_sites} call "
          f"sites checked ({outcome.distributed} touch distributed tables{sent_note}); "
          f"allowed by name: {allowed}; violations: {len(outcome.violations)}")
    for record, finding in outcome.violations:
        write(f"  VIOLATION {finding}\n    {' '.join(record.statement.split())[:400]}\n"
              f"    from {' < '.join(record.frames[:4]) or record.process}")


def _catalog(config: pytest.Config) -> Catalog | None:
    """The migrated catalog, read through the owner's connection while the test server still runs."""
    try:
        from django.db import connections
        from pytest_django.plugin import blocking_manager_key
    except Exception:  # noqa: BLE001 - no Django in this run
        return None
    blocker = config.stash.get(blocking_manager_key, None)
    try:
        if blocker is not None:
            with blocker.unblock():
                return _read(connections)
        return _read(connections)
    except Exception:  # noqa: BLE001 - no server, or no migrated schema
        return None


def _read(connections: Any) -> Catalog | None:
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT to_regclass('tenants_tenant') IS NOT NULL")
        if not cursor.fetchone()[0]:
            return None
        return read_catalog(cursor)


def main(argv: list[str]) -> int:
    """Check a kept --statement-dir again against the configured database's catalog."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.db import connections

    catalog = _read(connections)
    if catalog is None:
        print("no migrated schema to read the catalog from")
        return 2
    outcome = check(sqlrecorder.read_directory(Path(argv[0])), catalog)
    if len(argv) > 1:
        Path(argv[1]).write_text(json.dumps(outcome.report, indent=1), encoding="utf-8")
    summary(outcome, write=print)
    return 1 if outcome.violations else 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
