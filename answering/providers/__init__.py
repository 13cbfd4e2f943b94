"""Model providers over raw httpx: one module per wire dialect, one error taxonomy.

No vendor SDKs: SSE framing, Retry-After and the error taxonomy are ours to read and test.
A provider is configured as `dialect|base_url|API_KEY_ENV|model[|timeout_seconds]`
(settings.ANSWER_PROVIDERS); the chain tries them in order and fails over. spend.py meters
every call against the tenant's daily spend cap.

May import: tenants (the spend counter), nothing else of ours. Never the pipeline or a
surface (answering.pipeline, answering.api, answering.chat, answering.console).
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

DIALECTS = {
    "openai": "answering.providers.openai_compat.OpenAICompatProvider",
    "gemini": "answering.providers.gemini.GeminiProvider",
}


class ErrorKind(str, enum.Enum):
    AUTH = "auth"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXHAUSTED = "quota_exhausted"
    OVERLOADED = "overloaded"
    TIMEOUT = "timeout"
    BAD_RESPONSE = "bad_response"


class ProviderError(Exception):
    def __init__(self, kind: ErrorKind, message: str, *, retry_after: float | None = None, status: int | None = None,
                 billed: Completion | None = None):
        super().__init__(f"{kind.value}: {message}")
        self.kind, self.retry_after, self.status = kind, retry_after, status
        # Usage the provider reported before the failure: it billed those tokens, so the meter counts them.
        self.billed = billed


@dataclass(frozen=True)
class Message:
    role: str  # system | user | assistant
    content: str


@dataclass
class Completion:
    text: str
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    priced: bool = True
    latency_ms: float = 0.0
    attempts: list[dict[str, object]] = field(default_factory=list)


def reply_json(text: str) -> Any:
    """A model's JSON reply, read through the Markdown fence models wrap it in despite being told
    not to: "```json", or a bare "```", before it and "```" after. json.JSONDecodeError (a
    ValueError) when what is left is not JSON."""
    return json.loads(text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip())


class Provider(Protocol):
    name: str
    model: str

    def stream(self, messages: Sequence[Message], *, temperature: float, max_tokens: int,
               json_output: bool) -> Iterator[str | Completion]: ...


@dataclass(frozen=True)
class ProviderConfig:
    dialect: str
    base_url: str
    api_key_env: str
    model: str
    timeout: float

    @property
    def api_key(self) -> str:
        """A missing key is this provider's failure, not the deployment's: the chain fails over
        to the next entry and the answer path falls back as for any provider down, where an
        ImproperlyConfigured here was a 500 on every question."""
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise ProviderError(ErrorKind.AUTH, f"provider {self.dialect} needs the environment variable "
                                                f"{self.api_key_env}, which is empty")
        return key


def parse_provider_configs(raw: str) -> list[ProviderConfig]:
    configs = []
    for entry in [e.strip() for e in raw.replace("\n", ",").split(",") if e.strip()]:
        parts = entry.split("|")
        if len(parts) not in (4, 5) or parts[0] not in DIALECTS:
            raise ImproperlyConfigured(
                f"ANSWER_PROVIDERS entry {entry!r} must be dialect|base_url|API_KEY_ENV|model[|timeout] "
                f"with dialect one of {', '.join(DIALECTS)}")
        timeout = float(parts[4]) if len(parts) == 5 else settings.ANSWER_PROVIDER_TIMEOUT
        configs.append(ProviderConfig(parts[0], parts[1].rstrip("/"), parts[2], parts[3], timeout))
    return configs


def build_provider(config: ProviderConfig) -> Provider:
    return import_string(DIALECTS[config.dialect])(config)


def price(model: str, input_tokens: int, output_tokens: int) -> tuple[float, bool]:
    """Cost in USD from the price table (per million tokens); unpriced models cost 0, flagged."""
    table: dict[str, tuple[float, float]] = settings.ANSWER_PRICES
    if model not in table:
        return 0.0, False
    per_in, per_out = table[model]
    return (input_tokens * per_in + output_tokens * per_out) / 1_000_000, True


def parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime
        import datetime as dt

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())


def classify_status(status: int, body: str, retry_after: float | None) -> ProviderError:
    text = body[:300]
    if status in (401, 403):
        return ProviderError(ErrorKind.AUTH, f"HTTP {status}: {text}", status=status)
    if status == 429:
        quota_words = ("quota", "insufficient_quota", "billing", "exhausted")
        if any(word in body.lower() for word in quota_words) or (
            retry_after is not None and retry_after > settings.ANSWER_MAX_RETRY_WAIT
        ):
            # A wait longer than we are willing to spend is not congestion: fail over now.
            return ProviderError(ErrorKind.QUOTA_EXHAUSTED, f"HTTP 429: {text}", retry_after=retry_after, status=429)
        return ProviderError(ErrorKind.RATE_LIMITED, f"HTTP 429: {text}", retry_after=retry_after, status=429)
    if status in (500, 502, 503, 504, 529):
        return ProviderError(ErrorKind.OVERLOADED, f"HTTP {status}: {text}", retry_after=retry_after, status=status)
    return ProviderError(ErrorKind.BAD_RESPONSE, f"HTTP {status}: {text}", status=status)
