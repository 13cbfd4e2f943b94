"""Ingest: files → parsed documents → chunks → embeddings → one transaction per encode window.

The encoder is the cost; everything else is arranged to stay out of its way: parsing and
chunking run first for the whole set, unchanged documents (same fingerprint) are skipped
before any encoding, and chunks of many documents are encoded in large windows so the
model sees length-sorted batches just as a bare `model.encode` over all texts would.
"""

from __future__ import annotations

import contextvars
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal, get_args

import numpy as np
from django.db import connection
from django.utils.module_loading import import_string
from tqdm import tqdm

from config.stageclock import StageClock, clock_for_run, stage
from corpus.config import IngestConfig, ParseLimits
from corpus.encoders import token_states
from corpus.encoders.embedding import Encoder, encoder_for
from corpus.ingest import sitebuild, store
from corpus.ingest.chunking import ChunkDraft, chunk_sections
from corpus.ingest.manifest import MANIFEST_NAME, Conflict, load_manifest
from corpus.ingest.origin import COMMAND, DocumentOrigin
from corpus.ingest.rights import OPERATOR, Writer
from corpus.language.keys import index_keys_version
from corpus.models import Document
from corpus.parsers import ParsedDocument, ParseFailure, SourceFile, backend_for, fingerprint
from corpus.parsers.budget import INTERNAL as INTERNAL_PARSER_ERROR
from corpus.parsers.budget import parse_limits
from tenants.models import Audience, Tenant

SourceType = Literal["doc", "changelog", "ticket", "pdf"]
SOURCE_TYPES: tuple[SourceType, ...] = get_args(SourceType)
INDEX_LAYOUT = "exact-terms-1"


@dataclass
class IngestReport:
    tenant: str
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    archived: int = 0
    skipped: int = 0
    chunks: int = 0
    tokens: int = 0
    seconds: float = 0.0
    encode_seconds: float = 0.0
    failed: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    contested_chunks: int = 0
    skipped_reasons: dict[str, int] = field(default_factory=dict)
    # Wall seconds per stage (config.stageclock.INGEST_STAGES); the writer's overlap the encoder's.
    stage_seconds: dict[str, float] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped += 1
        self.skipped_reasons[reason] = self.skipped_reasons.get(reason, 0) + 1

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0

    @property
    def ok(self) -> bool:
        return not self.failed

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["chunks_per_second"] = round(self.chunks_per_second, 2)
        data["failed"] = [{"path": p, "reason": r} for p, r in self.failed]
        return data

    def summary(self) -> str:
        return (
            f"{self.tenant}: {self.added} added, {self.changed} changed, {self.unchanged} unchanged, "
            f"{self.archived} archived, {len(self.failed)} failed, {self.skipped} skipped, "
            f"{self.contested_chunks} chunks tagged contested; "
            f"{self.chunks} chunks, {self.tokens} tokens in {self.seconds:.1f}s "
            f"({self.chunks_per_second:.1f} chunks/s)"
            + "".join(f"\n  skipped {count} {reason}" for reason, count in sorted(self.skipped_reasons.items()))
            + self._stages_line()
        )

    def _stages_line(self) -> str:
        spent = [f"{name} {seconds:.2f}s" for name, seconds in self.stage_seconds.items() if seconds > 0]
        # The writer's stages (keys, write rows, statistics) run beside the encoder's.
        return f"\n  by stage: {', '.join(spent)}" if spent else ""


def collect_files(paths: Sequence[Path]) -> tuple[list[SourceFile], list[tuple[str, str]], list[Path],
                                                  list[tuple[str, str]]]:
    """Files to parse, failures for unusable paths, folders (for manifests and --prune), and the
    files of a folder that are not pages (a site's assets, types no parser reads) with why."""
    files: list[SourceFile] = []
    failures: list[tuple[str, str]] = []
    folders: list[Path] = []
    skipped: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw).resolve()
        if path.is_dir():
            folders.append(path)
            roots = sitebuild.build_roots(path)
            for file in sorted(path.rglob("*")):
                relative = file.relative_to(path)
                if not file.is_file() or any(part.startswith(".") for part in relative.parts) \
                        or file.name == MANIFEST_NAME:
                    continue
                reason = sitebuild.asset_reason(file, roots) or (
                    sitebuild.unsupported_reason(file) if backend_for(file.suffix) is None else None)
                if reason:
                    skipped.append((str(file), reason))
                else:
                    files.append(SourceFile(path=file, slug=relative.with_suffix("").as_posix()))
        elif path.is_file():
            if backend_for(path.suffix) is None:
                failures.append((str(path), f"unsupported file type {path.suffix or '(none)'}"))
            else:
                files.append(SourceFile(path=path, slug=path.stem))
        else:
            failures.append((str(path), "no such file or folder"))
    return files, failures, folders, skipped


def parse_all(files: Sequence[SourceFile], *, source_type: str,
              limits: ParseLimits | None = None) -> list[ParsedDocument | ParseFailure]:
    """Every file comes back parsed or failed with a reason; a backend that breaks (a configured
    one, or a bug in ours) fails the files it had not answered for, and the job goes on."""
    with parse_limits(limits or ParseLimits.from_settings()):
        return _parse_by_backend(files, source_type=source_type)


def _parse_by_backend(files: Sequence[SourceFile], *, source_type: str) -> list[ParsedDocument | ParseFailure]:
    by_backend: dict[str, list[SourceFile]] = defaultdict(list)
    for file in files:
        by_backend[file.path.suffix.lower()].append(file)
    results: list[ParsedDocument | ParseFailure] = []
    for suffix, group in by_backend.items():
        backend = backend_for(suffix)
        assert backend is not None
        answered: set[str] = set()
        try:
            for result in backend(group, source_type=source_type):
                answered.add(result.source_path.split("#", 1)[0])
                results.append(result)
        except Exception as exc:  # noqa: BLE001 - one format's failure is not the job's
            reason = f"{INTERNAL_PARSER_ERROR}: {exc.__class__.__name__}: {exc}"[:500]
            results.extend(ParseFailure(str(f.path), reason) for f in group if str(f.path) not in answered)
    return results


def _contextualizer(config: IngestConfig) -> Callable[..., list[str]] | None:
    return import_string(config.contextualizer) if config.contextualizer else None


def ingest_paths(
    *,
    tenant: Tenant,
    paths: Sequence[Path],
    audience: str = "public",
    source_type: str = "doc",
    prune: bool = False,
    manifest: Path | None = None,
    progress: bool = False,
    encoder: Encoder | None = None,
    say: Callable[[str], None] = lambda message: None,
    writer: Writer = OPERATOR,
    origin: DocumentOrigin = COMMAND,
    config: IngestConfig | None = None,
) -> IngestReport:
    """Ingest files and folders into a tenant. `writer` is who asked: the operator (the default,
    `manage.py ingest`) writes anywhere; a job started by a key or a staff member passes the
    audiences its principal holds, and nothing outside them is written, replaced or tagged.
    `origin` is recorded on every document this run writes."""
    config = config or IngestConfig.from_settings()
    report = IngestReport(tenant=tenant.slug)
    clock = StageClock()
    with clock_for_run(clock):
        _ingest_into(report, tenant=tenant, paths=paths, audience=audience, source_type=source_type,
                     prune=prune, manifest=manifest, progress=progress, encoder=encoder, say=say,
                     writer=writer, origin=origin, config=config)
    report.stage_seconds = clock.totals()
    return report


def _ingest_into(report: IngestReport, *, tenant: Tenant, paths: Sequence[Path], audience: str,
                 source_type: str, prune: bool, manifest: Path | None, progress: bool, encoder: Encoder | None,
                 say: Callable[[str], None], writer: Writer, origin: DocumentOrigin, config: IngestConfig) -> None:
    started = time.perf_counter()
    audiences = _check_request(tenant=tenant, audience=audience, source_type=source_type, writer=writer,
                               operator_only=prune or manifest is not None)
    files, failures, folders, skipped = collect_files(paths)
    report.failed.extend(failures)
    for _, reason in skipped:
        report.skip(reason)
    conflicts = _load_conflicts(folders, manifest)
    # Parsing needs no lock: a slow or hostile file must not hold up this tenant's other ingests.
    parsed_docs = _parse_into(report, files, source_type, config.parse)

    with store.tenant_ingest_lock(tenant=tenant, on_wait=say):
        encoder = encoder or encoder_for(tenant.language)
        store.refuse_mixed_encoder(tenant=tenant, encoder=encoder.identity)
        contextualize = _contextualizer(config)
        # Everything that changes what gets stored for the same input: a change re-ingests.
        config_key = f"{encoder.name}|{config.stored_key}|{INDEX_LAYOUT}{index_keys_version(tenant.language)}"
        pending, refused = _plan(tenant, parsed_docs, audiences, audience, config_key, encoder,
                                 config.chunk_target_tokens, report, writer, origin)
        # A refused document was not written: it may neither supersede nor be tagged by this run.
        accepted = [p for p in parsed_docs if (p.source_type, p.slug) not in refused]
        if contextualize is not None:
            pending = [replace(item, blurbs=contextualize(document=item.parsed, tenant=tenant,
                                                          chunks=[d.content for d in item.drafts]))
                       for item in pending]
        _encode_and_write(tenant, pending, encoder, report, progress, config)
        writable_ids = writer.audience_ids(audiences)
        _apply_supersession(tenant, accepted, report, writable_ids)
        _apply_conflicts(tenant, conflicts, report, writable_ids)
        if prune:
            _prune(tenant, folders, parsed_docs, report)
    report.seconds = time.perf_counter() - started


def _check_request(*, tenant: Tenant, audience: str, source_type: str, writer: Writer,
                   operator_only: bool) -> dict[str, int]:
    """The tenant's audiences (slug to id), once the request itself is known to be allowed."""
    if source_type not in SOURCE_TYPES:
        raise ValueError(f"source type {source_type!r} is not one of {', '.join(SOURCE_TYPES)}")
    audiences = dict(Audience.objects.filter(tenant=tenant).values_list("slug", "id"))
    if audience not in audiences:
        raise ValueError(f"tenant {tenant.slug} has no audience {audience!r} (it has {', '.join(sorted(audiences))})")
    if not writer.may_write(audience):
        raise ValueError(f"this ingest may not write to audience {audience!r} (it holds {writer.describe()})")
    if operator_only and not writer.is_operator:
        raise ValueError("--prune and an outside manifest are for the operator on the machine")
    return audiences


def _load_conflicts(folders: Sequence[Path], manifest: Path | None) -> list[Conflict]:
    conflicts: list[Conflict] = []
    for folder in folders:
        conflicts.extend(load_manifest(folder))
    if manifest is not None:
        if not manifest.is_file():
            raise ValueError(f"manifest {manifest} does not exist")
        conflicts.extend(load_manifest(manifest.parent, name=manifest.name))
    return conflicts


def _parse_into(report: IngestReport, files: Sequence[SourceFile], source_type: str,
                limits: ParseLimits) -> list[ParsedDocument]:
    parsed_docs: list[ParsedDocument] = []
    with stage("parse"):
        results = parse_all(files, source_type=source_type, limits=limits)
    for result in results:
        if isinstance(result, ParseFailure):
            if result.skipped:
                report.skip(result.reason)
                report.warnings.append(f"{result.source_path}: skipped, {result.reason}")
            else:
                report.failed.append((result.source_path, result.reason))
        else:
            parsed_docs.append(result)
    return parsed_docs


def _plan(tenant: Tenant, parsed_docs: list[ParsedDocument], audiences: dict[str, int], default_audience: str,
          config_key: str, encoder: Encoder, target: int, report: IngestReport,
          writer: Writer = OPERATOR, origin: DocumentOrigin = COMMAND,
          ) -> tuple[list[store.DocumentWrite], set[tuple[str, str]]]:
    """What to encode and write, and the documents refused (each a failure in the report)."""
    pending: list[store.DocumentWrite] = []
    refused: set[tuple[str, str]] = set()
    slug_of = {pk: slug for slug, pk in audiences.items()}
    by_type: dict[str, list[ParsedDocument]] = defaultdict(list)
    for parsed in parsed_docs:
        by_type[parsed.source_type].append(parsed)
    for kind, docs in by_type.items():
        states = store.stored_states(tenant=tenant, source_type=kind, slugs=[d.slug for d in docs])
        for parsed in docs:
            state = states.get(parsed.slug)
            problem = _write_refusal(parsed, state, audiences, slug_of, default_audience, writer, tenant)
            if problem:
                report.failed.append((parsed.source_path, problem))
                refused.add((parsed.source_type, parsed.slug))
                continue
            audience_slug = parsed.audience or default_audience
            content_hash = fingerprint(parsed.fingerprint, audience_slug, config_key)
            # Unchanged means the same bytes under the same configuration, and still where the
            # last run left it: live, or archived because a newer document supersedes it.
            if state is not None and state.content_hash == content_hash and (
                state.status == Document.Status.ACTIVE or state.superseded
            ):
                report.unchanged += 1
                continue
            with stage("chunk"):
                drafts = chunk_sections(parsed.sections, counter=encoder, target=target)
            if not drafts:
                report.failed.append((parsed.source_path, "no text to index"))
                refused.add((parsed.source_type, parsed.slug))
                continue
            pending.append(store.DocumentWrite(parsed, audiences[audience_slug], content_hash, drafts, origin=origin))
    return pending, refused


def _write_refusal(parsed: ParsedDocument, state: store.StoredState | None, audiences: dict[str, int],
                   slug_of: dict[int, str], default_audience: str, writer: Writer, tenant: Tenant) -> str:
    """Why this document may not be written by this writer, or "" when it may."""
    audience_slug = parsed.audience or default_audience
    # The writer's rights first: the same refusal whether or not the audience exists.
    if not writer.may_write(audience_slug):
        return f"audience {audience_slug!r} is not one this upload may write to (it holds {writer.describe()})"
    if audience_slug not in audiences:
        return f"audience {audience_slug!r} does not exist in {tenant.slug}"
    if state is not None and not writer.may_write(slug_of.get(state.audience_id, "")):
        what = "entry id" if parsed.source_type in ("changelog", "ticket") else "slug"
        return (f"{what} {parsed.slug!r} belongs to a document this upload may not replace "
                f"(it holds {writer.describe()}); nothing was changed")
    return ""


def _write_group(tenant: Tenant, group: list[store.DocumentWrite], vectors: np.ndarray, encoder: str,
                 token_states: list[bytes | None]) -> list[tuple[str, int]]:
    outcomes = store.write_documents(tenant=tenant, items=group, vectors=vectors, encoder=encoder,
                                     token_states=token_states)
    return [(outcome, len(item.drafts)) for (outcome, _), item in zip(outcomes, group)]


def _threaded_write(tenant: Tenant, group: list[store.DocumentWrite], vectors: np.ndarray, encoder: str,
                    token_states: list[bytes | None]) -> list[tuple[str, int]]:
    try:
        return _write_group(tenant, group, vectors, encoder, token_states)
    finally:
        connection.close()  # the writer thread's own connection


def _encode_and_write(tenant: Tenant, pending: list[store.DocumentWrite], encoder: Encoder, report: IngestReport,
                      progress: bool, config: IngestConfig) -> None:
    """Encode window N+1 while window N is written: PostgreSQL (HNSW inserts above all) works on
    the other core instead of adding to the wall time. Inside an outer transaction (tests) the
    writes stay on this thread, because another connection could not see uncommitted rows."""
    window = config.encode_window
    total = sum(len(p.drafts) for p in pending)
    bar = tqdm(total=total, unit="chunk", desc=f"embedding {tenant.slug}", disable=not progress)
    overlap = not connection.in_atomic_block
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-writer") if overlap else None
    in_flight: Future[list[tuple[str, int]]] | None = None

    def settle(future: Future[list[tuple[str, int]]] | None, group: list[store.DocumentWrite]) -> None:
        if future is None:
            return
        for (outcome, count), item in zip(future.result(), group):
            if outcome == "unchanged":
                report.unchanged += 1
                continue
            setattr(report, outcome, getattr(report, outcome) + 1)
            report.chunks += count
            report.tokens += sum(d.token_count for d in item.drafts)

    previous: list[store.DocumentWrite] = []
    start = 0
    try:
        while start < len(pending):
            group: list[store.DocumentWrite] = []
            size = 0
            while start < len(pending) and (not group or size + len(pending[start].drafts) <= window):
                group.append(pending[start])
                size += len(pending[start].drafts)
                start += 1
            blurbs = [item.blurbs[i] if item.blurbs else "" for item in group for i in range(len(item.drafts))]
            texts = [store.embedded_text(blurb, draft.content)
                     for blurb, draft in zip(blurbs, (d for item in group for d in item.drafts))]
            t0 = time.perf_counter()
            vectors, states = token_states.encode_for_storage(encoder, texts, plain=[not b for b in blurbs],
                                                              keep=config.token_states, bits=config.token_states_bits)
            report.encode_seconds += time.perf_counter() - t0
            settle(in_flight, previous)  # at most one window waits to be written
            if executor is not None:
                # The run's stage clock goes along: contextvars do not cross into a pool's thread.
                in_flight = executor.submit(contextvars.copy_context().run, _threaded_write, tenant, group,
                                            vectors, encoder.identity, states)
            else:
                in_flight = _done(_write_group(tenant, group, vectors, encoder.identity, states))
            previous = group
            bar.update(size)
        settle(in_flight, previous)
    finally:
        if executor is not None:
            executor.shutdown(wait=True)
        bar.close()


def _done(value: list[tuple[str, int]]) -> Future[list[tuple[str, int]]]:
    future: Future[list[tuple[str, int]]] = Future()
    future.set_result(value)
    return future


def _apply_supersession(tenant: Tenant, parsed_docs: list[ParsedDocument], report: IngestReport,
                        writable_ids: frozenset[int] | None) -> None:
    refs = [(p.source_type, p.slug) for p in parsed_docs if p.supersedes]
    refs += [(p.source_type, p.supersedes) for p in parsed_docs if p.supersedes]
    if not refs:
        return
    # A document outside the writer's audiences is not found: it can be neither archived nor named.
    found = store.find_documents(tenant=tenant, refs=refs, audience_ids=writable_ids)
    for parsed in parsed_docs:
        if not parsed.supersedes:
            continue
        new_id = found.get((parsed.source_type, parsed.slug))
        old_id = found.get((parsed.source_type, parsed.supersedes))
        if old_id is None:
            report.warnings.append(f"{parsed.slug} supersedes {parsed.supersedes!r}, which is not ingested")
            continue
        if new_id is not None:
            report.archived += store.archive_documents(tenant=tenant, document_ids=[old_id], superseded_by=new_id)


def _apply_conflicts(tenant: Tenant, conflicts: list[Conflict], report: IngestReport,
                     writable_ids: frozenset[int] | None) -> None:
    for conflict in conflicts:
        if not conflict.match.strip():
            # strpos(content, '') is 1: an empty match would mark every chunk of the documents.
            report.failed.append((f"conflict {conflict.id}", "match is empty; name the text the documents disagree on"))
            continue
        refs = [(ref.source_type, ref.slug) for ref in conflict.documents]
        found = store.find_documents(tenant=tenant, refs=refs, audience_ids=writable_ids)
        missing = [f"{t}:{s}" for t, s in refs if (t, s) not in found]
        if missing:
            report.warnings.append(f"conflict {conflict.id}: documents not ingested: {', '.join(missing)}")
        if found:
            report.contested_chunks += store.tag_contested(
                tenant=tenant, document_ids=list(found.values()), match=conflict.match
            )


def _prune(tenant: Tenant, folders: list[Path], parsed_docs: list[ParsedDocument], report: IngestReport) -> None:
    seen = {(p.source_type, p.slug) for p in parsed_docs}
    seen_failed = {path for path, _ in report.failed}
    for folder in folders:
        for kind in SOURCE_TYPES:
            stored = store.active_documents_under(tenant=tenant, source_type=kind, root=f"{folder}/")
            # A file that failed to parse this time is not "gone": never archive it for that.
            gone = [pk for slug, pk in stored.items() if (kind, slug) not in seen
                    and not any(path.startswith(str(folder / slug)) for path in seen_failed)]
            report.archived += store.archive_documents(tenant=tenant, document_ids=gone)

