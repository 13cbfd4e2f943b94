"""Parse what the chat form sends: the question, the last turns, the browser's conversation id."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from answering.pipeline.limits import MAX_QUESTION_CHARS

# Each earlier turn is cut to this many characters before it waits for its stream
# (answering/chat/pending.py); rewriting needs what a turn was about, not all of it. The
# pipeline's own cap is the question limit.
HISTORY_TURN_CHARS = 1500
MAX_HISTORY_FIELD_CHARS = 64 * 1024
_CONVERSATION_ID = re.compile(r"^[A-Za-z0-9-]{1,64}$")


class AskInvalid(ValueError):
    """A message for the visitor: what to change before asking again."""


@dataclass(frozen=True)
class AskInput:
    question: str
    history: list[dict[str, str]]
    conversation_id: str


def _history(raw: str) -> list[dict[str, str]]:
    if not raw.strip():
        return []
    if len(raw) > MAX_HISTORY_FIELD_CHARS:
        raise AskInvalid("The conversation is too long to send; reload the page to start a new one.")
    try:
        turns: Any = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise AskInvalid("The conversation could not be read; reload the page to start a new one.") from exc
    if not isinstance(turns, list):
        raise AskInvalid("The conversation could not be read; reload the page to start a new one.")
    cleaned = []
    for turn in turns[-settings.ANSWER_HISTORY_TURNS:]:
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant") \
                or not isinstance(turn.get("content"), str):
            raise AskInvalid("The conversation could not be read; reload the page to start a new one.")
        cleaned.append({"role": turn["role"], "content": turn["content"][:HISTORY_TURN_CHARS]})
    return cleaned


def ask_input_parse(*, data: Any) -> AskInput:
    question = str(data.get("question", "")).strip()
    if not question:
        raise AskInvalid("Please type a question first.")
    if len(question) > MAX_QUESTION_CHARS:
        raise AskInvalid(f"Please keep your question under {MAX_QUESTION_CHARS} characters "
                         f"(it has {len(question)}).")
    conversation_id = str(data.get("conversation_id", "")).strip()
    if not _CONVERSATION_ID.match(conversation_id):
        raise AskInvalid("This page lost its conversation id; reload it to start again.")
    return AskInput(question=question, history=_history(str(data.get("history", ""))),
                    conversation_id=conversation_id)
