"""What an ingest does, as frozen values: the one place the corpus reads its behaviour's settings.

`ingest_paths` (the top of the ingest flow) takes an IngestConfig, or builds one from settings
when its caller passes none, and hands it down: the parse limits to the parsers (as the
parse budget's context, beside its deadline), the chunk size to the chunker, the window and
the token states to the encoder and the writer. A website sync takes its SyncLimits the
same way. An eval arm that changes what is indexed is an IngestConfig with fields replaced
(evaluation.shadow), never a settings override (docs/decisions/0097).

The encoder itself is a resource of the machine, not a behaviour: which weights and which
runtime (corpus.encoders.embedding) stay the operator's settings, read where the encoder is
loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from django.conf import settings


@dataclass(frozen=True)
class ParseLimits:
    max_file_bytes: int  # a file over this fails alone, unread
    max_line_chars: int  # a longer line or field fails its file (0032)
    seconds: float  # each file's parse budget: this much ...
    seconds_per_mb: float  # ... plus this much per MB of the file

    @classmethod
    def from_settings(cls) -> ParseLimits:
        return cls(max_file_bytes=settings.INGEST_MAX_FILE_BYTES, max_line_chars=settings.INGEST_MAX_LINE_CHARS,
                   seconds=float(settings.INGEST_PARSE_SECONDS),
                   seconds_per_mb=float(settings.INGEST_PARSE_SECONDS_PER_MB))

    def seconds_for(self, size: int) -> float:
        return self.seconds + self.seconds_per_mb * size / 1_000_000


@dataclass(frozen=True)
class IngestConfig:
    chunk_target_tokens: int  # the chunker's target size (0017)
    contextualizer: str  # dotted path of a blurb writer (contextual retrieval), "" for none
    encode_window: int  # chunks encoded together, and written while the next window encodes
    token_states: bool  # store each chunk's token states for the late-interaction reranker (0060)
    token_states_bits: int  # 4 or 8 bits per stored state
    parse: ParseLimits

    @classmethod
    def from_settings(cls) -> IngestConfig:
        return cls(chunk_target_tokens=settings.CHUNK_TARGET_TOKENS,
                   contextualizer=settings.CORPUS_CONTEXTUALIZER or "",
                   encode_window=settings.INGEST_ENCODE_WINDOW, token_states=settings.INGEST_TOKEN_STATES,
                   token_states_bits=settings.INGEST_TOKEN_STATES_BITS, parse=ParseLimits.from_settings())

    def with_overrides(self, overrides: Mapping[str, Any]) -> IngestConfig:
        """This configuration with top-level fields replaced; an unknown name fails loudly."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"IngestConfig has no field {', '.join(unknown)} (it has {', '.join(sorted(known))})")
        return replace(self, **overrides)

    @property
    def stored_key(self) -> str:
        """What in this configuration changes the chunks stored for the same input: a
        document ingested under another key is not unchanged."""
        return f"{self.chunk_target_tokens}|{self.contextualizer}"


@dataclass(frozen=True)
class SyncLimits:
    max_pages: int  # the ceiling on any source's page limit
    max_run_bytes: int  # bytes one run may download, sitemaps included
    max_run_seconds: int
    max_page_bytes: int
    timeout_seconds: float  # per request; a page's whole download gets four times this
    delay_seconds: float  # between requests to the site, raised by its Crawl-delay
    allow_private_addresses: bool  # a deployment that syncs its own intranet (tenants.netguard)
    user_agent: str

    @classmethod
    def from_settings(cls) -> SyncLimits:
        return cls(max_pages=settings.WEBSYNC_MAX_PAGES, max_run_bytes=settings.WEBSYNC_MAX_RUN_BYTES,
                   max_run_seconds=settings.WEBSYNC_MAX_RUN_SECONDS, max_page_bytes=settings.WEBSYNC_MAX_PAGE_BYTES,
                   timeout_seconds=float(settings.WEBSYNC_TIMEOUT_SECONDS),
                   delay_seconds=float(settings.WEBSYNC_DELAY_SECONDS),
                   allow_private_addresses=settings.WEBSYNC_ALLOW_PRIVATE_ADDRESSES,
                   user_agent=f"Answerdesk-sync/1.0 (+{settings.PUBLIC_BASE_URL})")
