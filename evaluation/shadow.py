"""Shadow indexes: a tenant's corpus ingested again under another ingest configuration (an
arm's IngestConfig fields replaced), into a tenant of its own (`<slug>--<name>`), so an
indexing arm never touches the live index.

The inputs are recovered from the live documents' source paths. The shadow is stamped with a
fingerprint of the live documents and the configuration it was built with; a matching stamp is
reused without parsing a file, anything else re-ingests (unchanged documents still skip by
their own fingerprint, and documents gone from the live tenant are pruned). A reused shadow's
vectors are checked against this process's encoder first: a stamp says what was built, not
what a later change of encoder left (docs/decisions/0070).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


from corpus.config import IngestConfig
from corpus.encoders.embedding import encoder_for
from corpus.ingest.flow import ingest_paths
from corpus.ingest.manifest import MANIFEST_NAME
from corpus.models import Document
from corpus.ingest.reembed import reembed_tenant
from tenants.actions import tenant_get_or_create
from tenants.models import Tenant
from tenants.rls import rls_transaction
from tenants.writer import ChunkWriter

STAMP = " · fp "


def _live_documents(tenant: Tenant) -> list[tuple[str, str, str, str]]:
    with rls_transaction(tenant_id=tenant.id, all_audiences=True):
        return sorted(Document.objects.filter(tenant=tenant).values_list(
            "source_type", "slug", "content_hash", "source_path"))


def ingest_inputs(documents: list[tuple[str, str, str, str]]) -> tuple[list[Path], Path | None]:
    """The folders and files the live tenant was ingested from, and the manifest beside them.

    A folder-ingested file has a source path ending in its slug (`…/html/sql-select.html`,
    slug `sql-select`): its folder is the path minus the slug. Entries of a JSON or CSV file
    carry `file#id`: the file itself.
    """
    inputs: set[Path] = set()
    for _, slug, _, source_path in documents:
        path = Path(source_path.split("#", 1)[0])
        stem = path.with_suffix("").as_posix()
        if "#" not in source_path and stem.endswith("/" + slug):
            inputs.add(Path(stem[: -len(slug) - 1]))
        else:
            inputs.add(path)
    manifests = sorted({p.parent / MANIFEST_NAME for p in inputs if (p.parent / MANIFEST_NAME).is_file()})
    return sorted(inputs), (manifests[0] if manifests else None)


def fingerprint(documents: list[tuple[str, str, str, str]], config: IngestConfig) -> str:
    digest = hashlib.sha256()
    for row in documents:
        digest.update("\x1f".join(row).encode())
    digest.update(repr(config).encode())
    return digest.hexdigest()[:16]


def shadow_build(*, tenant: Tenant, name: str, ingest: Mapping[str, Any], progress: bool = False,
                 say: Callable[[str], None] = lambda message: None) -> Tenant:
    """The shadow `<slug>--<name>` of `tenant`, ingested with the configuration's `ingest` fields
    replaced (an unknown field fails before anything is built)."""
    config = IngestConfig.from_settings().with_overrides(ingest)
    documents = _live_documents(tenant)
    if not documents:
        raise ValueError(f"tenant {tenant.slug} has no documents to build a shadow index from")
    stamp = fingerprint(documents, config)
    shadow, _ = tenant_get_or_create(slug=f"{tenant.slug}--{name}",
                                     name=f"{tenant.name} (evaluation shadow: {name})")
    if shadow.shadow_of_id != tenant.id:
        Tenant.objects.filter(pk=shadow.pk).update(shadow_of=tenant)
        shadow.shadow_of = tenant
    if shadow.name.endswith(STAMP + stamp):
        healed = _reencode_foreign_vectors(shadow, config=config, progress=progress)
        say(f"shadow index {shadow.slug} is current (fingerprint {stamp}): reused"
            + (f", {healed} chunk(s) held another encoder's vectors and were re-encoded" if healed else ""))
        return shadow
    paths, manifest = ingest_inputs(documents)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise ValueError(f"cannot rebuild {shadow.slug}: the live tenant's sources are gone: {', '.join(missing[:3])}")
    say(f"building shadow index {shadow.slug} from {len(paths)} input(s) with {dict(ingest)}")
    Tenant.objects.filter(pk=shadow.pk).update(text_search_config=tenant.text_search_config, language=tenant.language)
    shadow.text_search_config, shadow.language = tenant.text_search_config, tenant.language
    report = ingest_paths(tenant=shadow, paths=paths, manifest=manifest, prune=True, progress=progress, say=say,
                          config=config)
    if report.failed:
        say(f"shadow ingest of {shadow.slug}: {len(report.failed)} failed, e.g. {report.failed[0]}")
    say(report.summary())
    base = shadow.name.split(STAMP, 1)[0]
    shadow.name = base + STAMP + stamp
    Tenant.objects.filter(pk=shadow.pk).update(name=shadow.name)
    return shadow


def _reencode_foreign_vectors(shadow: Tenant, *, config: IngestConfig, progress: bool) -> int:
    """Give this process's vectors back to chunks that hold another encoder's (the shadow built
    before the operator changed encoder: `reembed --all` leaves shadows alone): without this
    the arm would rank questions of one encoder against vectors of another."""
    encoder = encoder_for(shadow.language)
    writer = ChunkWriter(tenant_id=shadow.id)
    with writer.rls_context() as cursor:
        stale = writer.count_stale(cursor, encoder.identity, want_states=config.token_states and encoder.has_token_states)
    if not stale:
        return 0
    return reembed_tenant(tenant=shadow, encoder=encoder, progress=progress, config=config).chunks
