"""Questions that ask for one amount, answered by the one sentence that states it.

"How long are call recordings stored?" is answered by "Recordings are kept for 60 days and then
deleted."; the passage's other sentences ("Recording is off until an admin turns on Record
calls…") were what a reader cut from such answers (docs/decisions/0139). A question that asks a
second thing ("…and how do I change it?") or asks how to find or change the amount keeps the
whole passage.
"""

from __future__ import annotations

import re

# English and Czech, the Czech with or without its diacritics ("kolik stojí", "jak dlouho",
# "výchozí"). "Default" counts only as "what is the default …": "by default" is as often a
# question about behaviour ("sort newest first by default").
_AMOUNT = re.compile(
    r"\bhow (?:much|many|long|often|big|large)\b|\b(?:maximum|minimum)\b"
    r"|\bwhat(?:'s|\s+is|\s+are)\s+(?:the\s+)?default\b"
    r"|\bwhat(?:'s|\s+is|\s+are)\b[^?]{0,80}?\b(?:limit|size|timeout|quota)s?\b"
    r"|\bkolik\b|\bjak (?:dlouho|dlouh[áaéeouý]|často|casto|velk\w*)\b"
    r"|\bvýchoz\w*|\bvychoz\w*|\bmaxim[áa]ln\w*|\bminim[áa]ln\w*",
    re.IGNORECASE,
)
_QUESTION_WORD = (r"(?:what|how|which|when|where|why|who|can|could|do|does|is|are|will|should|would"
                  r"|co|jak|jaký|jaká|jaké|kdy|kde|proč|kolik|mohu|můžu|muzu|lze|jde|musím|musim)\b")
# A second question in the same message: a second question mark, a second sentence that is a
# question, or "and"/"or"/"a"/"nebo" closely followed by a question word. A comma alone is no
# second part ("Zapomněla jsem heslo, jak dlouho platí odkaz?").
_SECOND_PART = re.compile(
    r"\?.*\S.*\?|[.!?]\s+" + _QUESTION_WORD
    + r"|(?:\band\b|\bor\b|\ba\b|\bnebo\b)\s+(?:\w+\s+){0,2}?" + _QUESTION_WORD,
    re.IGNORECASE | re.DOTALL,
)
# The amount inside a question about a method: "How can I see how much quota is left?", "Can I
# change how long it waits?", "kde zjistím, kolik mám místa". A figure does not answer those.
_METHOD = re.compile(
    r"^\W*(?:how (?:do|can|should|would) (?:i|we|you)|jak (?:mám|mam|můžu|muzu|mohu|lze|zjistím|zjistim))\b"
    r"|\b(?:find out|see|check|tell|know|change|set|adjust|increase|raise|lower"
    r"|show|zjist\w*|pozn\w*|vid[ěe]t|zobraz\w*|uk[áa][žz]\w*|změn\w*|zmen\w*|nastav\w*|zvýš\w*|zvys\w*)"
    r"\W+(?:\w+\W+){0,2}?"
    r"(?:how (?:much|many|long|often|big|large)|kolik|jak (?:dlouho|často|casto))\b",
    re.IGNORECASE,
)
# A figure in digits or in words ("up to four priority levels", "jednou týdně", "za dva týdny").
# English "one" is left out (a pronoun as often: "the old one"), and so are bare Czech forms
# that are English words ("pet", "tri").
_FIGURE = re.compile(
    r"\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty"
    r"|hundred|thousand|once|twice|dozen"
    r"|jeden|jedna|jedno|jednou|jednu|dva|dvě|dve|tři|čtyři|ctyri|pět|šest|sest|sedm|osm|devět|devet"
    r"|deset|dvanáct|dvanact|patnáct|patnact|dvacet|třicet|tricet|sto|tisíc|tisic|dvakrát|dvakrat|třikrát|trikrat"
    r"|polovin\w*|pětin\w*|petin\w*|čtvrtin\w*|ctvrtin\w*)\b",
    re.IGNORECASE,
)
# A sentence that opens by pointing back ("It defaults to 64MB", "After that the key is
# forgotten", "Ten platí 24 hodin") says its figure of something only the sentence before names.
_POINTS_BACK = re.compile(
    r"^\W*(?:it|its|it's|this|that|these|those|they|their|then|such|both|after that|otherwise"
    r"|to|ten|ta|tato|tento|toto|tyto|ty|tam|pak|potom|poté|jeho|její|jejich)\b",
    re.IGNORECASE,
)


def asks_one_amount(question: str) -> bool:
    """An amount and nothing else: its answer is the one sentence that states it."""
    return bool(_AMOUNT.search(question)) and not _SECOND_PART.search(question) and not _METHOD.search(question)


def states_figure(sentence: str) -> bool:
    """A figure in a sentence that can stand alone."""
    return bool(_FIGURE.search(sentence)) and not _POINTS_BACK.match(sentence)


# The ranking's lean (0061), older than the rule above and measured in English only: a question
# asking for an amount or a default lifts each sentence that holds a digit or the word "default"
# by 0.05. "What is the API rate limit?" leans (helpwise-n039's answer is "600 requests per
# minute"); "Can I get a higher rate limit?" does not (paylane-n022 lost its answer to
# "$249/month" while any "limit" counted). It differs from _AMOUNT in "default" and in Czech;
# making the two one is a change to measure, not a tidy-up.
_LEANS = re.compile(r"\b(?:how (?:much|many|long|often|big|large)|default|maximum|minimum)\b"
                    r"|\bwhat(?:'s|\s+is|\s+are)\b[^?]{0,80}?\b(?:limit|size|timeout|quota)s?\b", re.IGNORECASE)
_FIGURE_OR_DEFAULT = re.compile(r"\d|\bdefault\b", re.IGNORECASE)


def leans_to_figures(question: str) -> bool:
    return bool(_LEANS.search(question))


def figure_or_default(sentence: str) -> bool:
    return bool(_FIGURE_OR_DEFAULT.search(sentence))
