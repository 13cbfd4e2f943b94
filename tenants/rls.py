"""Session settings the row-level security policies read, for staff pages."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection

from tenants.models import Membership, Tenant


def staff_tenant_ids(user: Any) -> list[int]:
    """Tenants whose metadata a staff user may see: all for a superuser, else memberships."""
    if user.is_superuser:
        return list(Tenant.objects.values_list("id", flat=True))
    return list(Membership.objects.filter(user=user).values_list("tenant_id", flat=True))


@contextmanager
def staff_tenant_context(tenant_ids: Sequence[int]) -> Iterator[None]:
    value = ",".join(str(int(t)) for t in tenant_ids)
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('app.staff_tenant_ids', %s, false)", [value])
    try:
        yield
    finally:
        if connection.connection is not None and not connection.needs_rollback:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('app.staff_tenant_ids', '', false)")


@contextmanager
def tenant_context(tenant_id: int) -> Iterator[Any]:
    """A transaction in which row-level security admits one tenant's rows of the tenant-owned
    tables that are not chunk text (traces, escalations, cache entries). Chunk reads still go
    through the scope, whose policy also requires audiences."""
    from django.db import transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('app.tenant_id', %s, true)", [str(int(tenant_id))])
        yield cursor
        cursor.execute("SELECT set_config('app.tenant_id', '', true)")
