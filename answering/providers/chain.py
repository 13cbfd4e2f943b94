"""An ordered provider chain with failover.

Rate limited with a short Retry-After: wait (up to ANSWER_MAX_RETRY_WAIT) and try the same
provider once more. A longer Retry-After is quota exhaustion: fail over at once. Every other
error fails over. All providers failing raises AllProvidersFailed with every attempt, which
the pipeline turns into an abstention with an escalation, never a 500.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

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


class ProviderChain:
    def __init__(self, providers: Sequence[Provider]):
        self.providers = list(providers)

    @classmethod
    def from_settings(cls, *, reverse: bool = False) -> ProviderChain:
        providers = [build_provider(c) for c in parse_provider_configs(settings.ANSWER_PROVIDERS)]
        return cls(list(reversed(providers)) if reverse else providers)

    def __bool__(self) -> bool:
        return bool(self.providers)

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 800,
                 json_output: bool = False) -> Completion:
        attempts: list[dict[str, object]] = []
        for provider in self.providers:
            for attempt in range(2):
                try:
                    completion = self._collect(provider, messages, temperature, max_tokens, json_output)
                    completion.attempts = attempts
                    return completion
                except ProviderError as exc:
                    attempts.append({"provider": provider.name, "model": provider.model, "error": str(exc),
                                     "kind": exc.kind.value})
                    wait = exc.retry_after
                    if (exc.kind is ErrorKind.RATE_LIMITED and attempt == 0 and wait is not None
                            and wait <= settings.ANSWER_MAX_RETRY_WAIT):
                        time.sleep(wait)
                        continue
                    break
        raise AllProvidersFailed(attempts)

    @staticmethod
    def _collect(provider: Provider, messages: Sequence[Message], temperature: float, max_tokens: int,
                 json_output: bool) -> Completion:
        for item in provider.stream(messages, temperature=temperature, max_tokens=max_tokens, json_output=json_output):
            if isinstance(item, Completion):
                return item
        raise ProviderError(ErrorKind.BAD_RESPONSE, "stream produced no completion")
