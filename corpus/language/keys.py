"""Index keys for languages PostgreSQL cannot stem, computed in Python (docs/decisions/0050).

PostgreSQL ships no Czech stemmer, so a Czech tenant's `simple` tokens match no inflection:
`pes` never finds `psa`. For such a language each word becomes several keys, written at
ingest into the chunk's tsvector (the `language_keys` column) and computed the same way from
the question, so BM25, its statistics, the typo vocabulary and the audience rule read them
like any other lexeme:

- the lemma (simplemma's dictionary: `psa`, `psovi` → `pes`; `dne` → `den`), un-prefixed, so
  the typo vocabulary is a vocabulary of lemmas;
- a light stem (`~s:`) for what the dictionary does not know (`pavlače` → `pavlač`), in a
  language that has a stemmer written for it (Czech; Slovak has none, docs/decisions/0125);
- both again with diacritics folded (`~f:`, `~g:`), at half weight, so `liska` finds `liška`
  and never outranks it: a chunk holding the exact form also matches the full-weight keys;
- the four-letter prefix (`~p:`), at half weight, used by a question only for a word the
  dictionary does not know (a fallback: `Pavlovi` is known as Pavel and never reaches
  `pavlač` by its prefix). Where simplemma has no dictionary for the language at all, every
  word is such a word, and its keys are the word, its folded form and its prefix.

A keyed language is keyed one way: the prefix-only and no-key baselines 0050 measured were
removed with their arms (docs/decisions/0050 names the commit).

No PostgreSQL lexeme starts with `~` (its parser never emits one), so the namespaces cannot
collide with an English tenant's lexemes or with the `=` exact keys.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

from corpus.language.czech_stem import light_stem

STEM, FOLDED_LEMMA, FOLDED_STEM, PREFIX = "~s:", "~f:", "~g:", "~p:"
NAMESPACE_MARK = "~"
HALF = 0.5
_WORD = re.compile(r"[^\W_]+")
_PREFIX_LENGTH = 4
# tsvector limits: positions above 16383 are clamped and a lexeme keeps at most 256 of them.
_MAX_POSITION = 16383
_MAX_POSITIONS_PER_KEY = 255
# Function words and the question's own scaffolding ("kolik", "můžu", "máte"), as words and as
# lemmas: every chunk or no chunk holds them, and they would only dilute BM25 and the gate's
# question coverage (PostgreSQL's english configuration drops "how", "can" and "have" alike).
_CZECH_STOP = frozenset(
    "a aby ale ani ano asi až bez bude by byl být co či do i já jak jaký jako je jeho jej její jen jenž ji"
    " jsem jsme jsou jste k kde kdo kdy když ke kolik který mezi mi mít mně mnou moci můj muset my na nad"
    " náš ne nebo než o od on ona oni pak po pod podle pro proč proto před při s se si své svůj ta tak"
    " také tam te ten tento to tomu tu ty tvůj u už v váš ve vy z za ze že".split()
)
# The same list in Slovak ("koľko", "môžem" → môcť, "máte" → mať), word for word where Slovak
# has one, and `ich`, `aj`, `tá`, `tie`, which its lemmas and questions use where Czech has none.
_SLOVAK_STOP = frozenset(
    "a aby aj ale ani áno asi až bez bude by bol byť čo či do i ja ako aký je jeho jej ich len ju som sme sú"
    " ste k kde kto kedy keď ku koľko ktorý medzi mi mať mne mnou môcť môj musieť my na nad náš nie alebo"
    " než o od on ona oni potom po pod podľa pre prečo preto pred pri s sa si svoje svoj ta tá tak tiež tam"
    " tie ten tento to tomu tu ty tvoj u už v váš vo vy z za zo že".split()
)


@dataclass(frozen=True)
class KeyedLanguage:
    """How one language's words become keys."""

    # In the ingest fingerprint (index_keys_version): bumped when this language's keys change,
    # so its tenants' chunks are keyed again and no other language's are.
    version: str
    stop: frozenset[str]
    # A light stemmer written for this language, or None: another language's stemmer conflates
    # the wrong forms (docs/decisions/0125), and the lemma and the prefix fallback remain.
    stem: Callable[[str], str] | None = None


# Languages whose keys are computed here; every other language keeps its PostgreSQL config.
KEYED_LANGUAGES: dict[str, KeyedLanguage] = {
    "cs": KeyedLanguage(version="1", stop=_CZECH_STOP, stem=light_stem),
    "sk": KeyedLanguage(version="1", stop=_SLOVAK_STOP),
}


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


@cache
def has_dictionary(language: str) -> bool:
    """Whether simplemma has a dictionary for the language (loading it, about 2 s, on first use)."""
    import simplemma  # loaded on first use: its dictionaries are read lazily per language

    try:
        simplemma.is_known("a", lang=language)
    except ValueError:  # simplemma's word for a language it has no dictionary for
        return False
    return True


@lru_cache(maxsize=65536)
def _lemma(word: str, language: str) -> tuple[str, bool]:
    if not has_dictionary(language):
        return word, False  # every word unknown: its keys fall back on the prefix
    import simplemma

    known = simplemma.is_known(word, lang=language)
    return simplemma.lemmatize(word, lang=language).lower(), known


def dictionary_lemma(word: str, language: str) -> tuple[str, bool]:
    """The word's lemma and whether the dictionary knows the word (not a guess from its ending);
    the word itself and False in a language simplemma has no dictionary for."""
    return _lemma(word.lower(), language)


@cache
def folded_stop_forms(language: str) -> frozenset[str]:
    """Every form of the language's stop words with its diacritics folded (`musim`, `muzu`,
    `muzete`), read once per process from the dictionary simplemma has loaded for is_known: a
    pass over its forms, about 0.3 s for Czech's 360,000, on the first question with an unknown
    word."""
    stop = KEYED_LANGUAGES[language].stop
    forms = {fold(word) for word in stop}
    if has_dictionary(language):
        from simplemma.strategies.dictionaries.dictionary_factory import DEFAULT_DICTIONARY_FACTORY

        dictionary = DEFAULT_DICTIONARY_FACTORY.get_dictionary(language)  # the one is_known reads
        forms.update(fold(form.lower()) for form, lemma in dictionary.items() if lemma.lower() in stop)
    return frozenset(forms)


def word_keys(word: str, *, language: str, question: bool) -> list[WeightedKey]:
    """The keys of one lower-cased word of a keyed language, full weight first."""
    rules = KEYED_LANGUAGES[language]
    lemma, known = _lemma(word, language)
    if lemma in rules.stop:
        return []
    # A question's scaffolding typed without diacritics (`Musim`, `muzu`) is a word the dictionary
    # does not know; counted, it weighed as a missing word in the gate's coverage. Documents keep
    # their keys: they are written with diacritics, and their keys are stored (version unchanged).
    if question and not known and fold(word) in folded_stop_forms(language):
        return []
    if rules.stem is None:
        keys = [WeightedKey(lemma, 1.0), WeightedKey(FOLDED_LEMMA + fold(lemma), HALF)]
    else:
        stem = rules.stem(word)
        keys = [WeightedKey(lemma, 1.0), WeightedKey(STEM + stem, 1.0),
                WeightedKey(FOLDED_LEMMA + fold(lemma), HALF), WeightedKey(FOLDED_STEM + fold(stem), HALF)]
    # Folded, so a question typed without diacritics still reaches it.
    if not question or (not known and len(word) >= _PREFIX_LENGTH):
        keys.append(WeightedKey(PREFIX + fold(word[:_PREFIX_LENGTH]), HALF))
    return keys


def index_keys_version(language: str) -> str:
    """What the ingest fingerprint adds for this language: nothing where PostgreSQL indexes."""
    scheme = scheme_for(language)
    return "" if scheme == "simple" else f"|keys:{language}-{scheme}-{KEYED_LANGUAGES[language].version}"


def words(text: str, *, language: str) -> list[str | None]:
    """Lower-cased words in order; a stop word of the language is None (it keeps its position)."""
    stop = KEYED_LANGUAGES[language].stop
    return [None if w in stop else w for w in (m.group(0).lower() for m in _WORD.finditer(text))]


def document_keys(text: str, *, language: str) -> str | None:
    """The chunk's keys as a tsvector literal, or None when PostgreSQL's config indexes it."""
    if scheme_for(language) == "simple":
        return None
    positions: dict[str, list[int]] = {}
    for index, word in enumerate(words(text, language=language), start=1):
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
    for word in words(text, language=language):
        if word is not None and word not in seen:
            seen[word] = word_keys(word, language=language, question=True)
    return [group for group in seen.values() if group]


def _quote(key: str) -> str:
    return "'" + key.replace("\\", "\\\\").replace("'", "''") + "'"
