"""The Gemini dialect (generativelanguage API, streamGenerateContent with alt=sse)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from answering.providers import Completion, ErrorKind, Message, ProviderError
from answering.providers.base import HttpProvider, finished_completion, parse_json, stream_events


class GeminiProvider(HttpProvider):
    dialect = "gemini"

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
        yield finished_completion(
            name=self.name, model=self.model, parts=parts, tokens_in=int(usage.get("promptTokenCount", 0)),
            tokens_out=int(usage.get("candidatesTokenCount", 0)), started=started, usage_seen=bool(usage),
            ended=finished, missing_end="without a finishReason")
