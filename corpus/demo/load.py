"""Load the committed demo corpus into its tenants (make run does this on an empty database)."""

from __future__ import annotations

from collections.abc import Callable

import yaml

from corpus.demo.declared import DEMO_DIR, LANGUAGE_TENANTS, TENANTS, source_paths, tenant_folder
from corpus.ingest.flow import IngestReport, ingest_paths
from corpus.ingest.manifest import MANIFEST_NAME
from tenants import actions
from tenants.models import Tenant


def demo_load(*, force: bool = False, progress: bool = False,
              say: Callable[[str], None] = lambda m: None) -> list[IngestReport]:
    reports = []
    languages = {slug: ("en", "english") for slug in TENANTS} | {
        slug: (language, config) for slug, (_, language, config) in LANGUAGE_TENANTS.items()}
    names = TENANTS | {slug: name for slug, (name, _, _) in LANGUAGE_TENANTS.items()}
    for slug, name in names.items():
        if Tenant.objects.filter(slug=slug).exists() and not force:
            say(f"demo tenant {slug} exists; skipping (use --force to re-ingest)")
            continue
        language, config = languages[slug]
        tenant = Tenant.objects.filter(slug=slug).first() or actions.tenant_create(
            slug=slug, name=name, text_search_config=config, language=language)
        folder = tenant_folder(slug)
        reports.append(ingest_paths(tenant=tenant, paths=source_paths(folder), manifest=folder / MANIFEST_NAME,
                                    progress=progress, say=say))
    demo_settings_apply()
    return reports


def demo_settings_apply() -> None:
    """The demo tenants' settings (tenants.yaml: listed on the front door), data not code."""
    settings = yaml.safe_load((DEMO_DIR / "tenants.yaml").read_text(encoding="utf-8")) or {}
    for slug, values in settings.items():
        Tenant.objects.filter(slug=slug).update(listed=bool(values.get("listed", False)))
