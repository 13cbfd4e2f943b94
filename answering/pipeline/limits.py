"""What the pipeline takes: the question's limits and the one rule for the history turns.

Every surface (REST, the OpenAI-compatible endpoint, the chat page, `manage.py ask`) checks
its requests against these numbers, and the pipeline applies the same rules again, so a
surface that forgets one cannot make the pipeline read more than this.
"""

from __future__ import annotations

from collections.abc import Sequence


from retrieval.querytext import clean_query

MAX_QUESTION_CHARS = 4000
# The most earlier turns one request may carry: REST refuses more (its documented contract),
# the OpenAI-compatible endpoint keeps the most recent (its clients resend whole conversations).
# Of those, the pipeline reads the last AnswerConfig.history_turns (history_turns below).
MAX_HISTORY_TURNS = 20
MAX_CONVERSATION_ID_CHARS = 64
HISTORY_ROLES = ("user", "assistant")


class QuestionRejected(ValueError):
    pass


def checked_question(question: str | None) -> str:
    """The question as the pipeline reads it; QuestionRejected if it is empty or too long."""
    text = clean_query(question or "").strip()
    if not text:
        raise QuestionRejected("the question is empty")
    if len(text) > MAX_QUESTION_CHARS:
        raise QuestionRejected(f"the question is {len(text)} characters; the limit is {MAX_QUESTION_CHARS}")
    return text


def last_turns(history: Sequence[dict[str, str]], keep: int) -> list[dict[str, str]]:
    """The window of the conversation the pipeline reads: its last `keep` turns
    (AnswerConfig.history_turns)."""
    return list(history)[-keep:]


def history_turns(history: Sequence[dict[str, str]] | None, keep: int) -> list[dict[str, str]]:
    """The turns the pipeline reads (the last `keep`), each cut to the question limit. QuestionRejected
    for a turn, read or not, that is neither the user's nor the assistant's."""
    turns = []
    for turn in history or []:
        role, content = str(turn.get("role", "")), str(turn.get("content", ""))
        if role not in HISTORY_ROLES:
            raise QuestionRejected(f"history role {role!r} is not user or assistant")
        turns.append({"role": role, "content": content})
    return [{**turn, "content": clean_query(turn["content"])[:MAX_QUESTION_CHARS]} for turn in last_turns(turns, keep)]
