"""Transaction-local settings the row-level security policies read: one tenant and its
audiences for readers and writers, a set of tenants for staff pages."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connections, transaction
from psycopg import sql

from tenants.models import Membership, Tenant


def staff_tenant_ids(user: Any) -> list[int]:
    """Tenants whose metadata a staff user may see: all for a superuser, else memberships."""
    if user.is_superuser:
        return list(Tenant.objects.values_list("id", flat=True))
    return list(Membership.objects.filter(user=user).values_list("tenant_id", flat=True))


def _set_local_sql(values: Mapping[str, str]) -> str:
    return sql.SQL("; ").join(
        sql.SQL("SET LOCAL {} = {}").format(sql.Identifier(*name.split(".")), sql.Literal(str(value)))
        for name, value in values.items()
    ).as_string(None)


def set_local(cursor: Any, values: Mapping[str, str]) -> None:
    """Transaction-local settings, as `SET LOCAL name = 'value'` statements in one round trip.

    Not `set_config(name, value, true)`, which does the same on one server: on a Citus
    coordinator only `SET LOCAL` reaches the workers' connections (citus.propagate_set_commands
    = 'local'), and there a policy reading an unset app.tenant_id returns no rows without a word
    (docs/scaling.md). Names are ours; values are quoted as literals."""
    cursor.execute(_set_local_sql(values))


def scoped_read(*, tenant_id: int, audience_ids: Sequence[int], statement: str, params: Mapping[str, Any],
                local_settings: Mapping[str, str] | None = None,
                using: str = "default") -> tuple[list[str], list[tuple[Any, ...]]]:
    """One read under one tenant's and audiences' settings: (column names, rows).

    Outside a transaction the settings and the statement go as one query string in one round
    trip. PostgreSQL runs a multi-statement query as one implicit transaction, so the
    `SET LOCAL`s hold for the statement and end with it: nothing is left on the connection
    for the next client, and nothing has to be cleared (docs/decisions/0131). Inside a
    caller's transaction the read is a savepoint of it, its settings cleared on the way out.
    """
    connection = connections[using]
    # Server-side binding (an operator's OPTIONS) sends one statement per query: no one trip there.
    one_trip = not connection.settings_dict.get("OPTIONS", {}).get("server_side_binding")
    if not one_trip or connection.in_atomic_block or not connection.get_autocommit():
        with rls_transaction(tenant_id=tenant_id, audience_ids=audience_ids, using=using) as cursor:
            if local_settings:
                set_local(cursor, local_settings)
            cursor.execute(statement, params)
            return [column.name for column in cursor.description], cursor.fetchall()
    values = {"app.tenant_id": str(int(tenant_id)), "app.audience_ids": ",".join(str(int(a)) for a in audience_ids),
              **(local_settings or {})}
    with connection.cursor() as cursor:
        # The statement's parameters are merged into the whole string: a literal % in a
        # setting's value must not read as a placeholder.
        cursor.execute(_set_local_sql(values).replace("%", "%%") + "; " + statement, params)
        while cursor.description is None:  # the SET results come first
            if not cursor.nextset():
                raise RuntimeError("a scoped read returned no result set")
        return [column.name for column in cursor.description], cursor.fetchall()


@contextmanager
def staff_tenant_context(tenant_ids: Sequence[int], *, using: str = "default") -> Iterator[None]:
    """A transaction whose staff setting admits `tenant_ids`, and nothing after it.

    Transaction-local, like `app.tenant_id`: a session-level value would stay on the server
    connection between transactions, and a pooler in transaction mode (pgbouncer) hands
    that connection to other clients there, with this staff member's rights
    (docs/decisions/0035). Inside an enclosing transaction (a test's) it is cleared on the
    way out as well, so that the rest of that transaction does not inherit it.
    """
    value = ",".join(str(int(t)) for t in tenant_ids)
    connection = connections[using]
    nested = connection.in_atomic_block
    with transaction.atomic(using=using):
        with connection.cursor() as cursor:
            set_local(cursor, {"app.staff_tenant_ids": value})
        yield
        if nested and not connection.needs_rollback:
            with connection.cursor() as cursor:
                set_local(cursor, {"app.staff_tenant_ids": ""})


@contextmanager
def rls_transaction(*, tenant_id: int, audience_ids: Sequence[int] | None = None, all_audiences: bool = False,
                    using: str = "default") -> Iterator[Any]:
    """A transaction whose row-level security settings admit one tenant and a set of audiences.

    The one place that sets `app.tenant_id` / `app.audience_ids`. `all_audiences` is for writers
    and maintenance (ingest replaces internal documents too; a DELETE must also pass the SELECT
    policies). The settings are transaction-local: on an exception the rollback reverts them,
    and, when the transaction is a caller's savepoint, cleared explicitly on the way out so that
    nothing later in the caller's transaction inherits them.
    """
    # Outermost, the COMMIT or ROLLBACK ends the settings; nested, they are cleared on the way out.
    nested = connections[using].in_atomic_block
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        if all_audiences:
            # Index: tenants_audience_tenant_slug_uniq (tenant_id, slug).
            cursor.execute("SELECT coalesce(string_agg(id::text, ','), '') FROM tenants_audience WHERE tenant_id = %s",
                           [int(tenant_id)])
            audiences = cursor.fetchone()[0]
        else:
            audiences = ",".join(str(int(a)) for a in audience_ids or ())
        set_local(cursor, {"app.tenant_id": str(int(tenant_id)), "app.audience_ids": audiences})
        yield cursor
        if nested:
            set_local(cursor, {"app.tenant_id": "", "app.audience_ids": ""})


def tenant_context(tenant_id: int) -> Any:
    """One tenant's rows of the tenant-owned tables that are not chunk text (traces,
    escalations, eval runs). Chunk reads still go through the scope, whose policy also
    requires audiences."""
    return rls_transaction(tenant_id=tenant_id)
