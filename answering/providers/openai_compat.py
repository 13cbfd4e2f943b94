"""The OpenAI chat-completions dialect: OpenAI, Groq, OpenRouter, Together, vLLM, Ollama,
llama.cpp servers. Streamed (SSE), ended by `data: [DONE]`; usage from stream_options."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from answering.providers import Completion, ErrorKind, Message, ProviderError
from answering.providers.base import HttpProvider, finished_completion, parse_json, stream_events


class OpenAICompatProvider(HttpProvider):
    dialect = "openai"

    def stream(self, messages: Sequence[Message], *, temperature: float, max_tokens: int,
               json_output: bool) -> Iterator[str | Completion]:
        started = time.perf_counter()
        body: dict[str, object] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if json_output:
            body["response_format"] = {"type": "json_object"}
        headers = {"Authorization": f"Bearer {self.config.api_key}", "Accept": "text/event-stream"}
        parts: list[str] = []
        usage: dict[str, int] = {}
        done = False
        for event in stream_events(self.config, f"{self.config.base_url}/chat/completions", headers=headers, body=body):
            if event.data.strip() == "[DONE]":
                done = True
                break
            payload = parse_json(event.data)
            if "error" in payload:
                raise ProviderError(ErrorKind.BAD_RESPONSE, f"error in stream: {str(payload['error'])[:200]}")
            if payload.get("usage"):
                usage = payload["usage"]
            for choice in payload.get("choices") or []:
                delta = (choice.get("delta") or {}).get("content")
                if delta:
                    parts.append(delta)
                    yield delta
        yield finished_completion(
            name=self.name, model=self.model, parts=parts, tokens_in=int(usage.get("prompt_tokens", 0)),
            tokens_out=int(usage.get("completion_tokens", 0)), started=started, usage_seen=bool(usage),
            ended=done, missing_end="before [DONE]")
