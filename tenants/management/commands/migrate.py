"""`migrate`, run as the owner role, then grant the application role what it may do.

The application role must never own a table (owners bypass row-level security unless it is
forced, and may ALTER it away), so migrations run on the "owner" connection and the app
role receives plain DML rights afterwards: no TRUNCATE (it skips RLS), no DDL.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.commands.migrate import Command as DjangoMigrateCommand
from django.db import DEFAULT_DB_ALIAS, connections
from psycopg import sql

from tenants.routers import migrating_as

OWNER_ALIAS = "owner"


def grant_app_privileges(*, using: str) -> str | None:
    role = settings.DATABASE_APP_ROLE
    owner_user = connections[using].settings_dict["USER"]
    if not role or role == owner_user:
        return None
    statements = [
        "GRANT USAGE ON SCHEMA public TO {role}",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}",
        "REVOKE TRUNCATE ON ALL TABLES IN SCHEMA public FROM {role}",
    ]
    with connections[using].cursor() as cursor:
        for statement in statements:
            cursor.execute(sql.SQL(statement).format(role=sql.Identifier(role)).as_string(None))
    return role


class Command(DjangoMigrateCommand):
    help = DjangoMigrateCommand.help + " Runs as the owner role and grants the application role DML rights."

    def handle(self, *args: Any, **options: Any) -> None:
        if options["database"] == DEFAULT_DB_ALIAS and OWNER_ALIAS in settings.DATABASES:
            options["database"] = OWNER_ALIAS
        with migrating_as(options["database"]):
            super().handle(*args, **options)
        role = grant_app_privileges(using=options["database"])
        if role and options["verbosity"] >= 1:
            self.stdout.write(f"Granted DML on all tables to the application role {role}.")
