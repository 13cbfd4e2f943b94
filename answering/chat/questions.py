"""Parse what the chat form sends: the question, the last turns, the browser's conversation id."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from answering.pipeline.config import configuration
from answering.pipeline.limits import MAX_CONVERSATION_ID_CHARS, MAX_QUESTION_CHARS, QuestionRejected, history_turns

MAX_HISTORY_FIELD_CHARS = 64 * 1024
UNREADABLE = "The conversation could not be read; reload the page to start a new one."
_CONVERSATION_ID = re.compile(rf"^[A-Za-z0-9-]{{1,{MAX_CONVERSATION_ID_CHARS}}}$")


class AskInvalid(ValueError):
    """A message for the visitor: what to change before asking again."""


@dataclass(frozen=True)
class AskInput:
    question: str
    history: list[dict[str, str]]
    conversation_id: str


def _history(raw: str) -> list[dict[str, str]]:
    """The turns the pipeline will read (answering/pipeline/limits.py): the pending ask stores no more."""
    if not raw.strip():
        return []
    if len(raw) > MAX_HISTORY_FIELD_CHARS:
        raise AskInvalid("The conversation is too long to send; reload the page to start a new one.")
    try:
        turns: Any = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise AskInvalid(UNREADABLE) from exc
    if not isinstance(turns, list) or not all(isinstance(t, dict) and isinstance(t.get("content"), str)
                                              for t in turns):
        raise AskInvalid(UNREADABLE)
    try:
        return history_turns(turns, configuration().answer.history_turns)
    except QuestionRejected as exc:
        raise AskInvalid(UNREADABLE) from exc


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
