"""`migrate`, run as the owner role, then grant the application role what it may do.

The application role must never own a table (owners bypass row-level security unless it is
forced, and may ALTER it away), so migrations run on the "owner" connection and the app
role receives plain DML rights afterwards: no TRUNCATE (it skips RLS), no DDL. The command
says what it granted, or why it granted nothing (docs/decisions/0035); the server itself
refuses an application role that RLS does not bind (config/checks.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.core.management.commands.migrate import Command as DjangoMigrateCommand
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from psycopg import sql

from tenants.citus_rules import violations
from tenants.distribution import distribution_plan, read_schema
from tenants.routers import migrating_as

OWNER_ALIAS = "owner"
_GRANTS = (
    "GRANT USAGE ON SCHEMA public TO {role}",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
    "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}",
    "REVOKE TRUNCATE ON ALL TABLES IN SCHEMA public FROM {role}",
)
# What the role is, after the grants: migrate warns at once about what the server would refuse.
_ROLE = """
SELECT rolsuper, rolbypassrls,
       (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')),
       (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind = 'S')
  FROM pg_roles WHERE rolname = %(role)s
"""


@dataclass(frozen=True)
class GrantReport:
    role: str | None
    granted: bool
    safe: bool  # row-level security binds the role: nothing here would stop the server
    message: str


def grant_app_privileges(*, using: str) -> GrantReport:
    role = settings.DATABASE_APP_ROLE
    owner_user = connections[using].settings_dict["USER"]
    app_user = connections[DEFAULT_DB_ALIAS].settings_dict["USER"]
    if not role:
        return GrantReport(None, False, False, (
            f"Granted nothing: APP_DATABASE_ROLE is not set, so the application connects as {app_user!r} "
            f"(APP_DATABASE_URL, else DATABASE_URL). If that is the owner, a superuser or a BYPASSRLS role, "
            "row-level security does not bind it and the server refuses to start (answerdesk.E001-E003). "
            "Create a role LOGIN NOSUPERUSER NOBYPASSRLS, set APP_DATABASE_URL and APP_DATABASE_ROLE, and "
            "run migrate again."))
    if role == owner_user:
        return GrantReport(role, False, False, (
            f"Granted nothing: APP_DATABASE_ROLE {role!r} is the owner role that runs migrations; an owner "
            "is not bound by row-level security and the server refuses to start with it (answerdesk.E003). "
            "Give the application a role of its own."))
    try:
        with connections[using].cursor() as cursor:
            cursor.execute(_ROLE, {"role": role})
            facts = cursor.fetchone()
            if facts is None:
                raise CommandError(f"Migrations applied, but granted nothing: the application role {role!r} "
                                   "(APP_DATABASE_ROLE) does not exist. Create it LOGIN NOSUPERUSER NOBYPASSRLS "
                                   "and run migrate again.")
            for statement in _GRANTS:
                cursor.execute(sql.SQL(statement).format(role=sql.Identifier(role)).as_string(None))
    except DatabaseError as exc:
        raise CommandError(f"Migrations applied, but the grants to the application role {role!r} failed: "
                           f"{exc}".strip()) from exc
    superuser, bypass, tables, sequences = facts
    message = (f"Granted the application role {role!r} SELECT, INSERT, UPDATE, DELETE on {tables} tables and "
               f"USAGE, SELECT on {sequences} sequences in schema public (no TRUNCATE, no DDL).")
    if superuser or bypass:
        message += (f" But {role!r} is {'a superuser' if superuser else 'a BYPASSRLS role'}: row-level "
                    "security does not bind it and the server refuses to start (answerdesk.E001/E002).")
    if app_user != role:
        message += f" Note: the application connects as {app_user!r}, not as {role!r}."
    return GrantReport(role, True, not (superuser or bypass), message)


def citus_check(*, using: str) -> str:
    """Refuse a migrated schema Citus could not distribute; on a Citus coordinator, name the
    tables a migration added that are not distributed yet (docs/decisions/0122).

    Runs after the migrations, so a refused migration stays applied: the command fails, CI fails,
    and the fix is the next migration. Before would need the migration's own transaction."""
    with connections[using].cursor() as cursor:
        schema = read_schema(cursor)
        problems = violations(schema)
        if problems:
            raise CommandError("Migrations applied, but the schema breaks Citus's rules for tables distributed "
                               "by tenant_id (docs/scaling.md); fix it in a new migration before deploying:\n  "
                               + "\n  ".join(problems))
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
        if cursor.fetchone() is None:
            return ""
        cursor.execute("SELECT logicalrelid::regclass::text FROM pg_dist_partition")
        placed = {name for (name,) in cursor.fetchall()}
    pending = sorted({s.table for s in distribution_plan(schema)
                      if s.phase in ("reference", "distribute") and s.table and s.table not in placed})
    return (f"Not yet distributed on this Citus coordinator: {', '.join(pending)}; run "
            "`manage.py distribute --apply`.") if pending else ""


class Command(DjangoMigrateCommand):
    help = DjangoMigrateCommand.help + " Runs as the owner role and grants the application role DML rights."

    def handle(self, *args: Any, **options: Any) -> None:
        if options["database"] == DEFAULT_DB_ALIAS and OWNER_ALIAS in settings.DATABASES:
            options["database"] = OWNER_ALIAS
        with migrating_as(options["database"]):
            super().handle(*args, **options)
        pending = citus_check(using=options["database"])
        if pending:
            self.stderr.write(pending)
        report = grant_app_privileges(using=options["database"])
        if not report.safe:
            self.stderr.write(report.message)
        elif options["verbosity"] >= 1:
            self.stdout.write(report.message)
