"""An ordered provider chain with failover, and the one metered door to every provider.

Rate limited with a short Retry-After: wait (up to ANSWER_MAX_RETRY_WAIT) and try the same
provider once more. A longer Retry-After is quota exhaustion: fail over at once. Every other
error fails over. All providers failing raises AllProvidersFailed with every attempt, which
the pipeline turns into an abstention with an escalation, never a 500.

Every request to a provider leaves through `complete`, and `complete` refuses to send one
without a meter (docs/decisions/0037-every-provider-call-is-metered.md): the meter is asked
before each request (the tenant's daily cap) and told after it what the provider billed,
failed attempts included when they reported usage. A chain carries its meter (`metered`),
or a synchronous region lends one (`metering`) to code that cannot be handed a chain, such
as the relevance scorer that retrieval reaches by a dotted path.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from django.conf import settings

from answering.providers import (
    Completion,
    ErrorKind,
    Message,
    Provider,
    ProviderError,
    build_provider,
    parse_provider_configs,
)


class AllProvidersFailed(Exception):
    def __init__(self, attempts: list[dict[str, object]]):
        super().__init__("every provider failed: " + "; ".join(f"{a['provider']}: {a['error']}" for a in attempts))
        self.attempts = attempts


class SpendCapReached(AllProvidersFailed):
    """The meter refused a call before any request left. A subclass of AllProvidersFailed, so
    a caller that already copes with no provider copes with this too; callers that can do
    better (generation falls back to the extractive answerer) catch it first."""

    def __init__(self, message: str, attempts: list[dict[str, object]] | None = None):
        Exception.__init__(self, message)
        self.attempts = [*(attempts or []),
                         {"provider": "spend-cap", "model": "", "error": message, "kind": "spend_cap"}]


class UnmeteredCall(RuntimeError):
    """A provider call with no meter: a programming error, refused before any request leaves."""


@dataclass(frozen=True)
class Usage:
    """What one request cost, as the provider reported it."""

    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float

    @classmethod
    def of(cls, completion: Completion) -> Usage:
        return cls(completion.provider, completion.model, completion.input_tokens, completion.output_tokens,
                   completion.cost_usd)


class CallMeter(Protocol):
    def admit(self, *, stage: str) -> None:
        """Raise SpendCapReached if the request may not be sent."""

    def record(self, *, stage: str, usage: Usage) -> None:
        """Count what a sent request cost."""


@dataclass
class StageUsage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    refused: int = 0

    def as_dict(self) -> dict[str, float | int]:
        return {"calls": self.calls, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": round(self.cost_usd, 9), "refused": self.refused}


@dataclass
class Tally:
    """A meter that counts by stage and never refuses: the base of the tenant meter
    (answering.providers.spend.TenantMeter), and on its own for tests and tools that bill no tenant."""

    stages: dict[str, StageUsage] = field(default_factory=dict)

    def admit(self, *, stage: str) -> None:
        return None

    def record(self, *, stage: str, usage: Usage) -> None:
        entry = self.stages.setdefault(stage, StageUsage())
        entry.calls += 1
        entry.input_tokens += usage.input_tokens
        entry.output_tokens += usage.output_tokens
        entry.cost_usd += usage.cost_usd

    def total(self) -> StageUsage:
        whole = StageUsage()
        for entry in self.stages.values():
            whole.calls += entry.calls
            whole.input_tokens += entry.input_tokens
            whole.output_tokens += entry.output_tokens
            whole.cost_usd += entry.cost_usd
            whole.refused += entry.refused
        return whole

    def as_dict(self) -> dict[str, dict[str, float | int]]:
        return {stage: entry.as_dict() for stage, entry in self.stages.items()}


_lent: ContextVar[CallMeter | None] = ContextVar("answering_provider_meter", default=None)


@contextmanager
def metering(meter: CallMeter) -> Iterator[CallMeter]:
    """Lend `meter` to chains without one, for a synchronous region only: a context variable
    set inside a generator would leak into whoever iterates it, so never span a `yield`."""
    token = _lent.set(meter)
    try:
        yield meter
    finally:
        _lent.reset(token)


class ProviderChain:
    def __init__(self, providers: Sequence[Provider], *, meter: CallMeter | None = None, stage: str = "generate"):
        self.providers = list(providers)
        self.meter = meter
        self.stage = stage

    @classmethod
    def from_settings(cls, *, reverse: bool = False) -> ProviderChain:
        providers = [build_provider(c) for c in parse_provider_configs(settings.ANSWER_PROVIDERS)]
        return cls(list(reversed(providers)) if reverse else providers)

    @classmethod
    def configured(cls) -> ProviderChain | None:
        """The operator's chain, or None when no provider is configured (the extractive answerer answers)."""
        return cls.from_settings() if settings.ANSWER_PROVIDERS.strip() else None

    def metered(self, meter: CallMeter, *, stage: str | None = None) -> ProviderChain:
        """The same providers, billed to `meter`; `stage` names calls that do not name their own."""
        return ProviderChain(self.providers, meter=meter, stage=stage or self.stage)

    def __bool__(self) -> bool:
        return bool(self.providers)

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 800,
                 json_output: bool = False, stage: str | None = None) -> Completion:
        meter = self.meter or _lent.get()
        if meter is None:
            raise UnmeteredCall("a provider call with no spend meter: bill it to a tenant "
                                "(answering.providers.spend.TenantMeter) or count it (Tally) before calling")
        stage = stage or self.stage
        attempts: list[dict[str, object]] = []
        for provider in self.providers:
            for attempt in range(2):
                try:
                    meter.admit(stage=stage)  # before every request that leaves, retries and failover included
                except SpendCapReached as refused:
                    raise SpendCapReached(str(refused), attempts) from None
                try:
                    completion = self._collect(provider, messages, temperature, max_tokens, json_output)
                except ProviderError as exc:
                    if exc.billed is not None:  # the provider reported usage before failing: it billed it
                        meter.record(stage=stage, usage=Usage.of(exc.billed))
                    attempts.append({"provider": provider.name, "model": provider.model, "error": str(exc),
                                     "kind": exc.kind.value})
                    wait = exc.retry_after
                    if (exc.kind is ErrorKind.RATE_LIMITED and attempt == 0 and wait is not None
                            and wait <= settings.ANSWER_MAX_RETRY_WAIT):
                        time.sleep(wait)
                        continue
                    break
                meter.record(stage=stage, usage=Usage.of(completion))
                completion.attempts = attempts
                return completion
        raise AllProvidersFailed(attempts)

    @staticmethod
    def _collect(provider: Provider, messages: Sequence[Message], temperature: float, max_tokens: int,
                 json_output: bool) -> Completion:
        for item in provider.stream(messages, temperature=temperature, max_tokens=max_tokens, json_output=json_output):
            if isinstance(item, Completion):
                return item
        raise ProviderError(ErrorKind.BAD_RESPONSE, "stream produced no completion")
