"""Re-encode a tenant's vectors in place when its encoder changes (EMBEDDING_BACKEND, or its
language moving it to or from the multilingual encoder, docs/decisions/0112), and
give chunks written without token states theirs (INGEST_TOKEN_STATES; docs/decisions/0063);
rewrite int8 states in four bits without the encoder (docs/decisions/0065).

One window of chunks per transaction: each window's rows get the new vectors and the new
encoder's name together, so a killed run leaves every row either old or new, never a vector
without its name, and the next run picks up exactly the rows still named for another encoder.
The text, its keyword statistics and the chunk ids do not change, so nothing else (cache,
citations, traces) has to follow. Runs under the tenant's ingest lock: an ingest waits, and
once it runs the tenant holds one encoder again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from tqdm import tqdm

from corpus.config import IngestConfig
from corpus.encoders import token_states
from corpus.ingest import store
from corpus.encoders.embedding import Encoder, encoder_for, get_encoder
from corpus.encoders.token_states import MAGIC, TokenStatesCorrupt
from tenants.models import Tenant
from tenants.writer import ChunkWriter


@dataclass
class ReembedReport:
    tenant: str
    encoder: str
    chunks: int = 0
    windows: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        rate = self.chunks / self.seconds if self.seconds else 0.0
        return (f"{self.tenant}: {self.chunks} chunks re-encoded with {self.encoder} in {self.windows} "
                f"windows, {self.seconds:.1f} s ({rate:.1f} chunks/s)")


def reembed_tenant(*, tenant: Tenant, window: int = 512, encoder: Encoder | None = None, progress: bool = False,
                   after_window: Callable[[int], None] = lambda done: None,
                   config: IngestConfig | None = None) -> ReembedReport:
    """Give every chunk of `tenant` a vector of its encoder (encoder_for its language); rows it
    already wrote stay."""
    encoder = encoder or encoder_for(tenant.language)
    config = config or IngestConfig.from_settings()
    report = ReembedReport(tenant=tenant.slug, encoder=encoder.identity)
    started = time.perf_counter()
    writer = ChunkWriter(tenant_id=tenant.id)
    want_states = config.token_states and encoder.has_token_states
    with store.tenant_ingest_lock(tenant=tenant):
        with writer.rls_context() as cursor:
            total = writer.count_stale(cursor, encoder.identity, want_states=want_states)
        bar = tqdm(total=total, unit="chunk", desc=f"re-encoding {tenant.slug}", disable=not progress or not total)
        try:
            while True:
                with writer.rls_context() as cursor:
                    rows = writer.stale_window(cursor, encoder.identity, window, want_states=want_states)
                    if not rows:
                        break
                    vectors, states = token_states.encode_for_storage(
                        encoder, [store.embedded_text(blurb, content) for _, blurb, content in rows],
                        plain=[not blurb for _, blurb, _ in rows], keep=want_states, bits=config.token_states_bits)
                    writer.set_embeddings(cursor, [chunk_id for chunk_id, _, _ in rows], vectors, encoder.identity,
                                          states)
                report.chunks += len(rows)
                report.windows += 1
                bar.update(len(rows))
                after_window(report.chunks)
        finally:
            bar.close()
    report.seconds = time.perf_counter() - started
    return report


@dataclass
class RepackReport:
    tenant: str
    chunks: int = 0
    unreadable: int = 0
    bytes_before: int = 0
    bytes_after: int = 0

    def summary(self) -> str:
        kept = f"; {self.unreadable} unreadable left as they are" if self.unreadable else ""
        return (f"{self.tenant}: {self.chunks} chunks' token states rewritten in 4 bits, "
                f"{self.bytes_before / 1e6:.1f} MB -> {self.bytes_after / 1e6:.1f} MB{kept}")


def repack_tenant(*, tenant: Tenant, window: int = 512, encoder: Encoder | None = None) -> RepackReport:
    """Rewrite `tenant`'s int8 token states (0063) in four bits: decoded and packed again, no
    encoder call, one window per transaction. A blob that reads as neither format stays (the
    reranker encodes its text and logs it; re-ingesting its document mends it)."""
    encoder = encoder or get_encoder()
    report = RepackReport(tenant=tenant.slug)
    writer = ChunkWriter(tenant_id=tenant.id)
    after = 0
    with store.tenant_ingest_lock(tenant=tenant):
        while True:
            with writer.rls_context() as cursor:
                rows = writer.states_window(cursor, encoder.identity, window, after=after, not_prefixed=MAGIC)
                if not rows:
                    break
                after = rows[-1][0]
                ids, blobs = [], []
                for chunk_id, blob in rows:
                    try:
                        states = token_states.unpack(blob, encoder.dimension)
                    except TokenStatesCorrupt:
                        report.unreadable += 1
                        continue
                    ids.append(chunk_id)
                    blobs.append(token_states.pack(states, bits=4))
                    report.bytes_before += len(blob)
                    report.bytes_after += len(blobs[-1])
                writer.set_token_states(cursor, ids, blobs)
                report.chunks += len(ids)
    return report
