"""Cache entries: what is cached, how often it is served, and purges per entry and per tenant.

An entry is visible when its audience set is within the member's (tenants/staff.py); purging
is a tenant admin's, and a tenant purge drops every entry of the tenant, so it needs a member
who holds every audience."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from cachelayer import service
from cachelayer.models import CacheEntry
from tenants.admin import TenantScopedAdmin
from tenants.staff import staff_access


@admin.register(CacheEntry)
class CacheEntryAdmin(TenantScopedAdmin):
    audience_field = "audience_ids"
    list_display = ["id", "tenant", "query_norm", "has_identifier", "hits", "generator", "original_cost_usd",
                    "created_at", "expires_at"]
    list_filter = ["tenant", "has_identifier", "generator"]
    search_fields = ["query_norm", "answer"]
    list_select_related = ["tenant"]
    actions = ["purge_entries", "purge_tenants"]

    def get_readonly_fields(self, request: HttpRequest, obj: CacheEntry | None = None) -> list[str]:
        return [f.name for f in CacheEntry._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: CacheEntry | None = None) -> bool:
        return False  # purges go through the actions below, which respect row-level security

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        found = super().get_actions(request)
        access = staff_access(request)
        if not access.admin_tenant_ids():
            found.pop("purge_entries", None)
        if not any(access.is_admin(t) and g.every_audience for t, g in access.grants.items()):
            found.pop("purge_tenants", None)
        return found

    @admin.action(description="Purge selected entries")
    def purge_entries(self, request: HttpRequest, queryset: Any) -> None:
        queryset = queryset.filter(tenant_id__in=staff_access(request).admin_tenant_ids())
        count = sum(service.purge_entry(tenant_id=e.tenant_id, entry_id=e.pk) for e in queryset)
        self.message_user(request, f"Purged {count} cache entr{'y' if count == 1 else 'ies'}.")

    @admin.action(description="Purge the whole cache of the selected entries' tenants")
    def purge_tenants(self, request: HttpRequest, queryset: Any) -> None:
        access = staff_access(request)
        tenants = sorted(t for t in set(queryset.values_list("tenant_id", flat=True))
                         if access.is_admin(t) and access.grants[t].every_audience)
        count = sum(service.purge_tenant(tenant_id=t) for t in tenants)
        self.message_user(request, f"Purged {count} cache entries of {len(tenants)} tenant(s).")
