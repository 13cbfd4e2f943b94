"""`manage.py distribute`: turn the migrated one-node schema into a Citus schema (docs/scaling.md).

`--plan` prints the statements, in order, generated from the catalog (tenants.distribution.
distribution_plan), each phase headed by what it locks; nothing is sent. `--apply` sends them to a
Citus coordinator, skipping what an earlier, interrupted run already did, then checks the result:
every table placed as planned and the search operators LEAKPROOF on every worker. On plain
PostgreSQL it refuses before touching anything. Both refuse a schema that breaks Citus's key rules
(tenants.citus_rules): Citus would refuse it halfway through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from tenants.citus_rules import violations
from tenants.distribution import Step, distribution_plan, read_schema

_CITUS = "SELECT extversion FROM pg_extension WHERE extname = 'citus'"
_WORKERS = "SELECT count(*) FROM citus_get_active_worker_nodes()"
_PLACED = "SELECT logicalrelid::regclass::text FROM pg_dist_partition"
_CONSTRAINT = ("SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass(%(table)s) AND conname = %(name)s")
_LEAKPROOF_ON_WORKERS = (
    "SELECT nodename, nodeport, success, result FROM run_command_on_workers("
    "$cmd$SELECT bool_and(proleakproof) FROM pg_proc WHERE oid IN "
    "('pg_catalog.ts_match_vq(tsvector, tsquery)'::regprocedure, 'public.similarity_op(text, text)'::regprocedure)"
    "$cmd$)")

NOT_CITUS = ("distribute --apply refused: this database is plain PostgreSQL (the citus extension is not "
             "installed). --apply runs on a Citus coordinator: install Citus on every node, "
             "CREATE EXTENSION citus, then citus_set_coordinator_host and citus_add_node for each worker "
             "(docs/scaling.md, 'From one node to three'). Nothing was changed. `distribute --plan` prints the "
             "statements without sending them.")


class Command(BaseCommand):
    help = "Print (--plan) or run on a Citus coordinator (--apply) the statements that distribute the schema."

    def add_arguments(self, parser: CommandParser) -> None:
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument("--plan", action="store_true", help="print the statements, send nothing")
        mode.add_argument("--apply", action="store_true", help="run them on a Citus coordinator")
        parser.add_argument("--database", default="owner",
                            help="the connection to use; --apply needs a superuser on the coordinator")

    def handle(self, *args: Any, **options: Any) -> None:
        with connections[options["database"]].cursor() as cursor:
            schema = read_schema(cursor)
            problems = violations(schema)
            if problems:
                raise CommandError("the schema breaks Citus's key rules, Citus would refuse it halfway:\n  "
                                   + "\n  ".join(problems))
            steps = distribution_plan(schema)
            if options["plan"]:
                for line in plan_lines(steps):
                    self.stdout.write(line)
                return
            apply_plan(cursor=cursor, steps=steps, write=self.stdout.write)


def plan_lines(steps: list[Step]) -> list[str]:
    """The statements, each phase headed by a comment saying what its statements lock."""
    lines: list[str] = []
    phase = None
    for step in steps:
        if step.phase != phase:
            phase = step.phase
            lines.append(f"-- {phase}: {step.locks}")
        lines.append(step.sql)
    return lines


def apply_plan(*, cursor: Any, steps: list[Step], write: Callable[[str], Any]) -> None:
    """Run the plan on a Citus coordinator, one statement at a time in Django's autocommit
    (create_distributed_table_concurrently refuses a transaction block); what a previous run
    already did is skipped, so a run stopped halfway is finished by running it again."""
    cursor.execute(_CITUS)
    row = cursor.fetchone()
    if row is None:
        raise CommandError(NOT_CITUS)
    cursor.execute(_WORKERS)
    if not cursor.fetchone()[0]:
        raise CommandError("distribute --apply refused: Citus " + str(row[0]) + " has no active worker node; add "
                           "them first with citus_add_node (docs/scaling.md). Nothing was changed.")
    for step in steps:
        if _done(cursor, step):
            write(f"skipped (already done): {step.sql}")
            continue
        write(step.sql)
        cursor.execute(step.sql)
        if step.phase == "workers":
            failed = [r for r in cursor.fetchall() if not r[2]]
            if failed:
                raise CommandError(f"{step.sql} failed on {failed}")
    missing = sorted({s.table for s in steps if s.phase in ("reference", "distribute") and s.table} - _placed(cursor))
    cursor.execute(_LEAKPROOF_ON_WORKERS)
    not_leakproof = [f"{r[0]}:{r[1]}" for r in cursor.fetchall() if not r[2] or r[3] != "t"]
    if missing or not_leakproof:
        raise CommandError(f"distribution incomplete: tables not placed {missing}; workers where the search "
                           f"operators are not LEAKPROOF {not_leakproof}")
    write(f"distributed: {len([s for s in steps if s.phase in ('reference', 'distribute')])} tables placed, "
          "search operators LEAKPROOF on every worker")


def _placed(cursor: Any) -> set[str]:
    cursor.execute(_PLACED)
    return {name for (name,) in cursor.fetchall()}


def _done(cursor: Any, step: Step) -> bool:
    if step.phase in ("reference", "distribute"):
        return step.table in _placed(cursor)
    if step.phase in ("drop-key", "add-key"):
        name = step.sql.split(" CONSTRAINT ", 1)[1].split(" ", 1)[0].strip('";')
        cursor.execute(_CONSTRAINT, {"table": step.table, "name": name})
        exists = cursor.fetchone() is not None
        # A key is dropped only before its table is distributed; once distributed it is re-added.
        return (not exists or step.table in _placed(cursor)) if step.phase == "drop-key" else exists
    return False
