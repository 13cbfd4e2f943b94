"""Query rewriting: follow-ups become standalone queries, validated before use.

Skipped on the first turn (a question with nothing before it is standalone). History is
rendered as data for the model to analyse, not replayed as chat turns to take part in. The
output is rejected when it is empty, overlong, or an answer instead of a rewrite; any
failure falls back to the raw question, because a worse query is better than no answer.
Offline (no provider, or a call the tenant's daily spend cap refused), follow-ups that lean on context ("what about…", pronouns, very short
questions) are joined to the previous user turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from answering.providers import Completion, Message
from answering.providers.chain import AllProvidersFailed, ProviderChain, SpendCapReached

PROMPT = """Rewrite the customer's last message as one standalone search query for the documentation.
Use the conversation only to resolve what the last message refers to. Do not answer it.
Reply with the query only, on one line.

<conversation>
{history}
</conversation>
<last_message>{question}</last_message>"""

_FOLLOW_UP = re.compile(r"^(what|how) about\b|\b(it|its|that|this|those|these|they|them|there|same|one)\b|^(and|also|but)\b",
                        re.IGNORECASE)
# A Czech or Slovak question is whole in three words ("Můžu vrátit krmivo?"), so the English
# six-word rule would join every one: here a follow-up is one that points back (a pronoun or
# "there", a leading "and"/"also"), or two words at most ("A Slovensko?"). Folded forms too, for
# a keyboard without accents (docs/decisions/0115).
_FOLLOW_UP_SLAVIC = re.compile(
    r"^(a|i|ale|a co|a jak|aj|tak)\b|\b(ho|to|toho|tomu|tom|tím|tim|tam|tu|tuto|ten|tenhle|tahle|tohle|jej|ji|jí|jim|"
    r"něj|nej|něho|neho|ní|ni|nich|něm|nem|taky|také|take|tiež|tiez|též|tez|stejně|stejne|rovnako)\b",
    re.IGNORECASE)
_SLAVIC = ("cs", "sk")
_ANSWER_LIKE = re.compile(r"^(yes|no|sure|sorry|i (don't|do not|cannot|can't)|as an ai|the answer)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Rewrite:
    query: str
    method: str  # none | offline | model | fallback
    reason: str = ""


def render_history(history: Sequence[dict[str, str]]) -> str:
    return "\n".join(f"{turn['role']}: {turn['content']}" for turn in history)


def validate_rewrite(candidate: str, question: str) -> str | None:
    """The reason to reject a rewrite, or None if it is usable."""
    text = candidate.strip()
    if not text:
        return "empty rewrite"
    if len(text) > max(300, 3 * len(question)) or text.count("\n") > 1:
        return "overlong rewrite"
    if _ANSWER_LIKE.search(text):
        return "the model answered instead of rewriting"
    return None


def rewrite_query(question: str, turns: Sequence[dict[str, str]], chain: ProviderChain | None,
                  language: str = "en") -> Rewrite:
    """`turns`: the window of the conversation the pipeline reads (limits.last_turns); `language`:
    the tenant's, which decides what the offline rule reads as a follow-up."""
    if not turns:
        return Rewrite(question, "none", "first turn")
    if chain:
        completion: Completion | None
        try:
            completion = chain.complete(
                [Message("user", PROMPT.format(history=render_history(turns), question=question))],
                temperature=0.0, max_tokens=120, stage="rewrite",
            )
        except SpendCapReached:
            completion = None  # past the cap: rewrite as if no provider were configured
        except AllProvidersFailed as exc:
            return Rewrite(question, "fallback", str(exc)[:200])
        if completion is not None:
            problem = validate_rewrite(completion.text, question)
            if problem:
                return Rewrite(question, "fallback", problem)
            return Rewrite(completion.text.strip(), "model")
    previous = [t["content"] for t in turns if t["role"] == "user"]
    if previous and _is_follow_up(question, language):
        return Rewrite(f"{previous[-1].strip()} {question.strip()}", "offline", "follow-up joined to the last user turn")
    return Rewrite(question, "none", "standalone question")


def _is_follow_up(question: str, language: str) -> bool:
    if language in _SLAVIC:
        return len(question.split()) <= 2 or bool(_FOLLOW_UP_SLAVIC.search(question))
    return len(question.split()) <= 6 or bool(_FOLLOW_UP.search(question))
