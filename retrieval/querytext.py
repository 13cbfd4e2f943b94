"""What a question may contain before it reaches SQL, the encoder and the trace."""

from __future__ import annotations

import re
import unicodedata

_KEEP = {"\n", "\t"}


def clean_query(text: str) -> str:
    """Control characters become spaces (PostgreSQL refuses NUL in text, and none of them carry
    meaning in a question); lone surrogates, which cannot be stored as UTF-8, are dropped."""
    out = []
    for ch in text:
        category = unicodedata.category(ch)
        if category == "Cs":
            continue
        out.append(" " if category == "Cc" and ch not in _KEEP else ch)
    return "".join(out)


_WORD = re.compile(r"[^\W\d_][\w.+#-]*[\w+#]|[^\W\d_]")
_SENTENCE_END = (".", "?", "!", ":", ";")


def written_words(text: str) -> list[str]:
    """The question's words as written, dotted identifiers whole (`Book.objects`)."""
    return [match.group(0) for match in _WORD.finditer(text)]


def written_names(text: str) -> list[str]:
    """Words written as names: capitalised inside a sentence (`Flask`), or with a capital after
    the first letter (`GraphQL`, `iPhone`). A word the corpus lacks is a typo to correct when
    written in lower case, and a name the corpus does not know when written like this
    (docs/decisions/0051): correcting `Flask` to `flash` answered a question about another
    framework from this one's documentation."""
    names = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        before = text[: match.start()].rstrip()
        sentence_start = not before or before.endswith(_SENTENCE_END)
        inner_capital = any(ch.isupper() for ch in word[1:])
        if inner_capital or (word[0].isupper() and not sentence_start):
            names.append(word)
    return names


# Words that date the asker's incident ("deleted at 3pm yesterday"): documentation is not dated
# by them, so a page's lacking them says nothing about whether it tells how to recover. Only the
# past: "today", "tonight" and "tomorrow" ask about a present or future state no page can know
# ("Is Helpwise down today?"), and counted they keep such a question escalated (0068). English
# lexemes, as the english stemmer leaves them.
_INCIDENT_DAYS = frozenset({"yesterday"})
_CLOCK_TIME = re.compile(r"\d{1,2}(?::\d{2})?(?:am|pm)")


def is_when_word(lexeme: str) -> bool:
    return lexeme in _INCIDENT_DAYS or _CLOCK_TIME.fullmatch(lexeme) is not None
