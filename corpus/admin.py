from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from corpus.models import Document
from tenants.admin import TenantScopedAdmin


@admin.register(Document)
class DocumentAdmin(TenantScopedAdmin):
    """Document metadata. Chunk text stays behind the tenant scope and is not listed here."""

    list_display = ["slug", "title", "tenant", "source_type", "audience", "status", "version",
                    "effective_date", "chunk_count", "updated_at"]
    list_filter = ["tenant", "source_type", "status", "audience__slug"]
    search_fields = ["slug", "title"]
    readonly_fields = [f.name for f in Document._meta.fields]
    list_select_related = ["tenant", "audience"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # documents arrive through ingest, which keeps chunks and hashes consistent

    def has_delete_permission(self, request: HttpRequest, obj: Document | None = None) -> bool:
        return False  # archive through ingest --prune or supersession; deleting loses history
