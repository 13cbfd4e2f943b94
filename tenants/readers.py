"""Who reads: build the scope for a tenant and a set of audience slugs."""

from __future__ import annotations

from collections.abc import Sequence

from tenants.actions import audience_ids
from tenants.models import Tenant
from tenants.scope import TenantScope


def reader_scope(*, tenant: Tenant, audiences: Sequence[str] = ("public",)) -> TenantScope:
    return TenantScope(tenant_id=tenant.id, audience_ids=audience_ids(tenant=tenant, slugs=list(audiences)))
