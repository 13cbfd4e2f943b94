"""What both dialects share: the HTTP call, status classification, the deadline, SSE lines."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import httpx

from answering.providers import (Completion, ErrorKind, ProviderConfig, ProviderError, classify_status,
                                 parse_retry_after, price)
from answering.providers.sse import Event, iter_events


class HttpProvider:
    """One endpoint of one dialect: `name` says which, for traces and failover logs."""

    dialect: ClassVar[str]

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.name = f"{self.dialect}@{config.base_url}"
        self.model = config.model


def stream_events(config: ProviderConfig, url: str, *, headers: dict[str, str], body: dict[str, Any]) -> Iterator[Event]:
    """POST and yield SSE events, mapping every failure onto the error taxonomy."""
    deadline = time.monotonic() + config.timeout
    timeout = httpx.Timeout(config.timeout, connect=min(5.0, config.timeout))
    try:
        with httpx.Client(timeout=timeout) as client, client.stream("POST", url, headers=headers, json=body) as response:
            if response.status_code != 200:
                text = response.read().decode("utf-8", "replace")
                raise classify_status(response.status_code, text,
                                      parse_retry_after(response.headers.get("retry-after")))
            for event in iter_events(response.iter_lines()):
                if time.monotonic() > deadline:
                    raise ProviderError(ErrorKind.TIMEOUT, f"no complete answer within {config.timeout}s")
                yield event
    except httpx.TimeoutException as exc:
        raise ProviderError(ErrorKind.TIMEOUT, f"{type(exc).__name__} after {config.timeout}s") from exc
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        raise ProviderError(ErrorKind.BAD_RESPONSE, f"stream broken: {exc}") from exc
    except httpx.ConnectError as exc:
        raise ProviderError(ErrorKind.OVERLOADED, f"cannot connect: {exc}") from exc


def parse_json(data: str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except json.JSONDecodeError as exc:
        raise ProviderError(ErrorKind.BAD_RESPONSE, f"malformed JSON in stream: {data[:120]!r}") from exc
    if not isinstance(value, dict):
        raise ProviderError(ErrorKind.BAD_RESPONSE, f"unexpected stream payload: {data[:120]!r}")
    return value


def finished_completion(*, name: str, model: str, parts: list[str], tokens_in: int, tokens_out: int,
                        started: float, usage_seen: bool, ended: bool, missing_end: str) -> Completion:
    """The stream's Completion, priced; a stream that never reached its end marker is a bad
    response that still carries what the provider billed (counted by the meter) when it said."""
    cost, priced = price(model, tokens_in, tokens_out)
    completion = Completion(text="".join(parts), provider=name, model=model, input_tokens=tokens_in,
                            output_tokens=tokens_out, cost_usd=cost, priced=priced,
                            latency_ms=round((time.perf_counter() - started) * 1000, 1))
    if not ended:
        raise ProviderError(ErrorKind.BAD_RESPONSE, f"stream ended {missing_end}",
                            billed=completion if usage_seen else None)
    return completion
