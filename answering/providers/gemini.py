"""The Gemini dialect (generativelanguage API, streamGenerateContent with alt=sse)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from answering.providers import Completion, ErrorKind, Message, ProviderConfig, ProviderError, price
from answering.providers.base import parse_json, stream_events


class GeminiProvider:
    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.name = f"gemini@{config.base_url}"
        self.model = config.model

    def stream(self, messages: Sequence[Message], *, temperature: float, max_tokens: int,
               json_output: bool) -> Iterator[str | Completion]:
        started = time.perf_counter()
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        contents = [{"role": "model" if m.role == "assistant" else "user", "parts": [{"text": m.content}]}
                    for m in messages if m.role != "system"]
        generation: dict[str, object] = {"temperature": temperature, "maxOutputTokens": max_tokens}
        if json_output:
            generation["responseMimeType"] = "application/json"
        body: dict[str, object] = {"contents": contents, "generationConfig": generation}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        url = f"{self.config.base_url}/models/{self.model}:streamGenerateContent?alt=sse"
        headers = {"x-goog-api-key": self.config.api_key, "Accept": "text/event-stream"}
        parts: list[str] = []
        usage: dict[str, int] = {}
        finished = False
        for event in stream_events(self.config, url, headers=headers, body=body):
            payload = parse_json(event.data)
            if "error" in payload:
                raise ProviderError(ErrorKind.BAD_RESPONSE, f"error in stream: {str(payload['error'])[:200]}")
            usage = payload.get("usageMetadata") or usage
            for candidate in payload.get("candidates") or []:
                for part in (candidate.get("content") or {}).get("parts") or []:
                    if part.get("text"):
                        parts.append(part["text"])
                        yield part["text"]
                if candidate.get("finishReason"):
                    finished = True
        tokens_in, tokens_out = int(usage.get("promptTokenCount", 0)), int(usage.get("candidatesTokenCount", 0))
        cost, priced = price(self.model, tokens_in, tokens_out)
        completion = Completion(text="".join(parts), provider=self.name, model=self.model, input_tokens=tokens_in,
                                output_tokens=tokens_out, cost_usd=cost, priced=priced,
                                latency_ms=round((time.perf_counter() - started) * 1000, 1))
        if not finished:
            raise ProviderError(ErrorKind.BAD_RESPONSE, "stream ended without a finishReason",
                                billed=completion if usage else None)
        yield completion
