"""Greetings, thanks, goodbyes and "what are you": fixed replies before any retrieval.

A pure function over an anchored, closed set of phrasings. Anchored means the whole message
must be one of these (plus punctuation, emoji and a name or two of filler); "hi, how do I
rotate my API key?" is a question and goes to the pipeline. A test runs every question and
history turn of every golden set through this and requires that none is intercepted.
"""

from __future__ import annotations

import re
import unicodedata

from django.utils.translation import gettext_lazy

_FILLER = (r"(?:\s+(?:there|all|everyone|team|folks|again|so much|a lot|very much|bot|answerdesk"
           r"|moc|vám|ti|všem|pěkně|mnohokrát|veľmi|pekne|všetkým))*")
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("greeting", re.compile(r"^(?:hi|hello|hey|hiya|howdy|good (?:morning|afternoon|evening)|greetings"
                            r"|ahoj|čau|dobrý den|dobré ráno|dobrý večer|zdravím|dobrý deň)" + _FILLER + r"$")),
    ("thanks", re.compile(r"^(?:thanks|thank you|thx|ty|cheers|many thanks|much appreciated|great,? thanks"
                          r"|ok(?:ay)?,? thanks|perfect,? thanks|děkuji|děkuju|díky|dík|ďakujem|ďakujeme|vďaka)"
                          + _FILLER + r"$")),
    ("goodbye", re.compile(r"^(?:bye|goodbye|good bye|see you|see ya|have a (?:good|nice) (?:day|one)"
                           r"|na shledanou|nashledanou|mějte se|hezký den|dovidenia|do videnia|majte sa|pekný deň)"
                           + _FILLER + r"$")),
    ("identity", re.compile(r"^(?:(?:who|what) are you(?: exactly)?|what can you do|are you (?:a )?(?:bot|human|real person)"
                            r"|who am i (?:talking|speaking) to|kdo jsi|kdo jste|co umíš|co umíte"
                            r"|jsi robot|jste robot|kto si|kto ste|čo vieš|čo viete|si robot|ste robot)$")),
]
# In the language active for the asker (answering/language.py).
REPLIES = {
    "greeting": gettext_lazy("Hello! Ask me anything about our product and I'll answer from the documentation."),
    "thanks": gettext_lazy("You're welcome! Anything else I can help with?"),
    "goodbye": gettext_lazy("Goodbye, and thanks for stopping by."),
    "identity": gettext_lazy("I'm the support assistant. I answer from this company's documentation, changelog and "
                             "resolved tickets, and cite my sources; when I don't know, a person from the team "
                             "follows up."),
}
_MAX_LENGTH = 60


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] not in ("S", "C"))  # emoji, controls
    text = re.sub(r"[!.,?¡¿:;~\-]+", " ", text)
    return " ".join(text.split())


def match_greeting(text: str) -> str | None:
    """The kind of small talk this message is, or None if it should go to the pipeline."""
    if not text or len(text) > _MAX_LENGTH:
        return None
    normalised = _normalise(text)
    for kind, pattern in _PATTERNS:
        if pattern.match(normalised):
            return kind
    return None


def greeting_reply(text: str) -> str | None:
    kind = match_greeting(text)
    return str(REPLIES[kind]) if kind else None
