"""Transaction-local settings the row-level security policies read: one tenant and its
audiences for readers and writers, a set of tenants for staff pages."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connections, transaction

from tenants.models import Membership, Tenant


def staff_tenant_ids(user: Any) -> list[int]:
    """Tenants whose metadata a staff user may see: all for a superuser, else memberships."""
    if user.is_superuser:
        return list(Tenant.objects.values_list("id", flat=True))
    return list(Membership.objects.filter(user=user).values_list("tenant_id", flat=True))


@contextmanager
def staff_tenant_context(tenant_ids: Sequence[int], *, using: str = "default") -> Iterator[None]:
    """A transaction whose staff setting admits `tenant_ids`, and nothing after it.

    Transaction-local, like `app.tenant_id`: a session-level value would stay on the server
    connection between transactions, and a pooler in transaction mode (pgbouncer) hands
    that connection to other clients there, with this staff member's rights
    (docs/decisions/0035). Cleared on the way out as well, so that the rest of an enclosing
    transaction (a test's) does not inherit it.
    """
    value = ",".join(str(int(t)) for t in tenant_ids)
    connection = connections[using]
    with transaction.atomic(using=using):
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('app.staff_tenant_ids', %s, true)", [value])
        yield
        if not connection.needs_rollback:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('app.staff_tenant_ids', '', true)")


@contextmanager
def rls_transaction(*, tenant_id: int, audience_ids: Sequence[int] | None = None, all_audiences: bool = False,
                    using: str = "default") -> Iterator[Any]:
    """A transaction whose row-level security settings admit one tenant and a set of audiences.

    The one place that sets `app.tenant_id` / `app.audience_ids`. `all_audiences` is for writers
    and maintenance (ingest replaces internal documents too; a DELETE must also pass the SELECT
    policies). The settings are transaction-local: on an exception the rollback reverts them,
    and on the way out they are cleared explicitly so nothing later in the transaction inherits them.
    """
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        if all_audiences:
            cursor.execute(
                "SELECT set_config('app.tenant_id', %(t)s, true), set_config('app.audience_ids',"
                " (SELECT coalesce(string_agg(id::text, ','), '') FROM tenants_audience WHERE tenant_id = %(tid)s),"
                " true)",
                {"t": str(int(tenant_id)), "tid": int(tenant_id)},
            )
        else:
            cursor.execute(
                "SELECT set_config('app.tenant_id', %s, true), set_config('app.audience_ids', %s, true)",
                [str(int(tenant_id)), ",".join(str(int(a)) for a in audience_ids or ())],
            )
        yield cursor
        cursor.execute("SELECT set_config('app.tenant_id', '', true), set_config('app.audience_ids', '', true)")


def tenant_context(tenant_id: int) -> Any:
    """One tenant's rows of the tenant-owned tables that are not chunk text (traces,
    escalations, eval runs). Chunk reads still go through the scope, whose policy also
    requires audiences."""
    return rls_transaction(tenant_id=tenant_id)
