"""Index keys for languages PostgreSQL cannot stem, computed in Python (docs/decisions/0050).

PostgreSQL ships no Czech stemmer, so a Czech tenant's `simple` tokens match no inflection:
`pes` never finds `psa`. For such a language each word becomes several keys, written at
ingest into the chunk's tsvector (the `language_keys` column) and computed the same way from
the question, so BM25, its statistics, the typo vocabulary and the audience rule read them
like any other lexeme:

- the lemma (simplemma's dictionary: `psa`, `psovi` → `pes`; `dne` → `den`), un-prefixed, so
  the typo vocabulary is a vocabulary of lemmas;
- a light stem (`~s:`) for what the dictionary does not know (`pavlače` → `pavlač`);
- both again with diacritics folded (`~f:`, `~g:`), at half weight, so `liska` finds `liška`
  and never outranks it: a chunk holding the exact form also matches the full-weight keys;
- the four-letter prefix (`~p:`), at half weight, used by a question only for a word the
  dictionary does not know (a fallback: `Pavlovi` is known as Pavel and never reaches
  `pavlač` by its prefix).

A keyed language is keyed one way: the prefix-only and no-key baselines 0050 measured were
removed with their arms (docs/decisions/0050 names the commit).

No PostgreSQL lexeme starts with `~` (its parser never emits one), so the namespaces cannot
collide with an English tenant's lexemes or with the `=` exact keys.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from corpus.language.czech_stem import light_stem

STEM, FOLDED_LEMMA, FOLDED_STEM, PREFIX = "~s:", "~f:", "~g:", "~p:"
NAMESPACE_MARK = "~"
HALF = 0.5
# Languages whose keys are computed here; every other language keeps its PostgreSQL config.
KEYED_LANGUAGES = ("cs",)
_WORD = re.compile(r"[^\W_]+")
_PREFIX_LENGTH = 4
# tsvector limits: positions above 16383 are clamped and a lexeme keeps at most 256 of them.
_MAX_POSITION = 16383
_MAX_POSITIONS_PER_KEY = 255
# Bumped whenever the keys a word gets change: the ingest fingerprint carries it, so stored
# chunks are keyed again instead of being skipped as unchanged.
KEYS_VERSION = "1"
# Function words and the question's own scaffolding ("kolik", "můžu", "máte"), as words and as
# lemmas: every chunk or no chunk holds them, and they would only dilute BM25 and the gate's
# question coverage (PostgreSQL's english configuration drops "how", "can" and "have" alike).
_CZECH_STOP = frozenset(
    "a aby ale ani ano asi až bez bude by byl být co či do i já jak jaký jako je jeho jej její jen jenž ji"
    " jsem jsme jsou jste k kde kdo kdy když ke kolik který mezi mi mít mně mnou moci můj muset my na nad"
    " náš ne nebo než o od on ona oni pak po pod podle pro proč proto před při s se si své svůj ta tak"
    " také tam te ten tento to tomu tu ty tvůj u už v váš ve vy z za ze že".split()
)


@dataclass(frozen=True)
class WeightedKey:
    key: str
    weight: float


def scheme_for(language: str) -> str:
    """`lemma` for a keyed language; `simple` where PostgreSQL's configuration indexes it."""
    return "lemma" if language in KEYED_LANGUAGES else "simple"


def fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=65536)
def _lemma(word: str, language: str) -> tuple[str, bool]:
    import simplemma  # loaded on first use: its dictionaries are read lazily per language

    known = simplemma.is_known(word, lang=language)
    return simplemma.lemmatize(word, lang=language).lower(), known


def dictionary_lemma(word: str, language: str) -> tuple[str, bool]:
    """The word's lemma and whether the dictionary knows the word (not a guess from its ending)."""
    return _lemma(word.lower(), language)


def word_keys(word: str, *, language: str, question: bool) -> list[WeightedKey]:
    """The keys of one lower-cased word, full weight first."""
    lemma, known = _lemma(word, language)
    if lemma in _CZECH_STOP:
        return []
    stem = light_stem(word)
    keys = [WeightedKey(lemma, 1.0), WeightedKey(STEM + stem, 1.0),
            WeightedKey(FOLDED_LEMMA + fold(lemma), HALF), WeightedKey(FOLDED_STEM + fold(stem), HALF)]
    # Folded, so a question typed without diacritics still reaches it.
    if not question or (not known and len(word) >= _PREFIX_LENGTH):
        keys.append(WeightedKey(PREFIX + fold(word[:_PREFIX_LENGTH]), HALF))
    return keys


def index_keys_version(language: str) -> str:
    """What the ingest fingerprint adds for this language: nothing where PostgreSQL indexes."""
    scheme = scheme_for(language)
    return "" if scheme == "simple" else f"|keys:{language}-{scheme}-{KEYS_VERSION}"


def words(text: str) -> list[str | None]:
    """Lower-cased words in order; a stop word is None (it keeps its position)."""
    return [None if w in _CZECH_STOP else w for w in (m.group(0).lower() for m in _WORD.finditer(text))]


def document_keys(text: str, *, language: str) -> str | None:
    """The chunk's keys as a tsvector literal, or None when PostgreSQL's config indexes it."""
    if scheme_for(language) == "simple":
        return None
    positions: dict[str, list[int]] = {}
    for index, word in enumerate(words(text), start=1):
        if word is None:
            continue
        for weighted in word_keys(word, language=language, question=False):
            held = positions.setdefault(weighted.key, [])
            if len(held) < _MAX_POSITIONS_PER_KEY:
                held.append(min(index, _MAX_POSITION))
    return " ".join(f"{_quote(key)}:{','.join(map(str, sorted(set(held))))}" for key, held in positions.items())


def question_keys(text: str, *, language: str) -> list[list[WeightedKey]]:
    """One group of keys per distinct question word (stop words left out)."""
    seen: dict[str, list[WeightedKey]] = {}
    for word in words(text):
        if word is not None and word not in seen:
            seen[word] = word_keys(word, language=language, question=True)
    return [group for group in seen.values() if group]


def _quote(key: str) -> str:
    return "'" + key.replace("\\", "\\\\").replace("'", "''") + "'"
