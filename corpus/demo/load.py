"""Load the committed demo corpus into its tenants (make run does this on an empty database)."""

from __future__ import annotations

from collections.abc import Callable

from corpus.demo.declared import TENANTS, source_paths, tenant_folder
from corpus.ingest import IngestReport, ingest_paths
from corpus.manifest import MANIFEST_NAME
from tenants import actions
from tenants.models import Tenant


def demo_load(*, force: bool = False, progress: bool = False,
              say: Callable[[str], None] = lambda m: None) -> list[IngestReport]:
    reports = []
    for slug, name in TENANTS.items():
        if Tenant.objects.filter(slug=slug).exists() and not force:
            say(f"demo tenant {slug} exists; skipping (use --force to re-ingest)")
            continue
        tenant, _ = actions.tenant_get_or_create(slug=slug, name=name)
        folder = tenant_folder(slug)
        reports.append(ingest_paths(tenant=tenant, paths=source_paths(folder), manifest=folder / MANIFEST_NAME,
                                    progress=progress, say=say))
    return reports
