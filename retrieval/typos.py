"""Typo correction against the asker's own visible vocabulary (pg_trgm over term statistics).

Only a query term that the asker's visible chunks never contain is corrected, and only to a
term those same chunks do contain: the vocabulary is read through the scope, so a correction
can never reveal a word from another tenant or a hidden audience.

Trigrams find a look-alike of a long word, not a hurried one: `lnog` shares one trigram with
`long`, `refnud` three of eleven with `refund`. A word no dictionary of the language knows that
trigrams leave uncorrected is therefore tried one edit away (a letter dropped, added, replaced,
or two neighbours swapped), each variant looked up in the visible vocabulary at once; the most
frequent one wins. A word the dictionary knows (`vault` asked of pages that say `fault`) is only
absent from these pages and is never moved by an edit (docs/decisions/0099). In a keyed
language (Czech, Slovak) the edit is tried on the word, with the language's own letters, and
each variant stands for its lemma, which is what the vocabulary holds (issue 49 item 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from corpus.language.keys import NAMESPACE_MARK, dictionary_lemma, has_dictionary, scheme_for, word_keys
from tenants.scope import TenantScope

_MIN_LENGTH = 4
# The trigram similarity a vocabulary term needs to stand in for an absent question word.
TYPO_SIMILARITY_MIN = 0.45


@dataclass(frozen=True)
class Correction:
    original: str
    corrected: str
    similarity: float
    # "typo" (a trigram look-alike), "edit" (one edit away, 0099) or "part": the word is one
    # dotted part of an identifier (0075).
    kind: str = "typo"


def correct_terms(scope: TenantScope, lexemes: tuple[str, ...], df: dict[str, int], *,
                  names: frozenset[str] = frozenset(), written: dict[str, str] | None = None,
                  language: str = "en") -> tuple[tuple[str, ...], list[Correction]]:
    """`names`: lexemes of words written as names (retrieval.querytext.written_names), which are
    never corrected: a name the corpus lacks stays a term it lacks, for the gate to see.
    `written`: lexeme → the word as asked, for the one-edit fallback (none without it). In a
    keyed language (corpus/language/keys.py) a term is its word's lemma, an unknown word's being
    the word itself, so the fallback reads the term (_keyed_edit_away)."""
    corrected: list[str] = []
    corrections: list[Correction] = []
    keyed = scheme_for(language) != "simple"
    for term in lexemes:
        # A stem, folded or prefix key (corpus/language/keys.py) is never corrected; its word's lemma is.
        if (df.get(term, 0) > 0 or len(term) < _MIN_LENGTH or any(ch.isdigit() for ch in term)
                or term in names or term.startswith(NAMESPACE_MARK)):
            corrected.append(term)
            continue
        candidates = scope.similar_terms(term, limit=1, threshold=TYPO_SIMILARITY_MIN)
        # Never to an exact identifier, nor to a stem, folded or prefix key (corpus/language/keys.py).
        if candidates and not candidates[0][0].startswith(("=", NAMESPACE_MARK)):
            found, similarity, _ = candidates[0]
            corrections.append(Correction(term, found, round(similarity, 3)))
            corrected.append(found)
        elif keyed and (keyed_edit := _keyed_edit_away(scope, term, language)) is not None:
            corrections.append(keyed_edit[0])
            corrected.extend(keyed_edit[1])
        elif not keyed and (edited := _one_edit_away(scope, term, (written or {}).get(term), language)) is not None:
            corrections.append(edited)
            corrected.append(edited.corrected)
        else:
            corrected.append(term)
    if keyed and corrections:
        # The misspelt word's own stem, folded and prefix keys are the typo's, held by no chunk:
        # left in, each counted as a missing word against the correction in the gate's coverage.
        typo_keys = {k.key for c in corrections for k in word_keys(c.original, language=language, question=True)[1:]}
        corrected = [t for t in corrected if t not in typo_keys or df.get(t, 0) > 0]
    return tuple(dict.fromkeys(corrected)), corrections


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def one_edit(term: str, *, letters: str = _LETTERS) -> set[str]:
    """Every string one edit from `term`: a letter dropped, two neighbours swapped, a letter
    replaced or one added (Norvig's edits1, about 55 x len(term) strings)."""
    splits = [(term[:i], term[i:]) for i in range(len(term) + 1)]
    dropped = {a + b[1:] for a, b in splits if b}
    swapped = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    replaced = {a + c + b[1:] for a, b in splits if b for c in letters}
    added = {a + c + b for a, b in splits for c in letters}
    return (dropped | swapped | replaced | added) - {term}


def is_misspelt(word: str | None, language: str) -> bool:
    """A written word no dictionary of the language knows (a typo), where one exists."""
    return (word is not None and word.isalpha() and word not in chat_shorthand() and has_dictionary(language)
            and not dictionary_lemma(word, language)[1])


def _one_edit_away(scope: TenantScope, term: str, word: str | None, language: str) -> Correction | None:
    """The visible vocabulary's most frequent term one edit from `term`, when the asker's word
    is one no dictionary knows (a typo, not a word these pages lack)."""
    if not is_misspelt(word, language):
        return None
    # One query for every variant, through the scope: the term statistics' primary key serves it.
    found = scope.document_frequencies(sorted(one_edit(term)))
    if not found:
        return None
    best = max(sorted(found), key=lambda candidate: found[candidate])
    return Correction(term, best, round(1 - 1 / len(term), 3), kind="edit")


# Letters an edit may add or put in place of another in a keyed language: its own, not only ASCII.
_KEYED_LETTERS = {"cs": "áčďéěíňóřšťúůýž", "sk": "áäčďéíĺľňóôŕšťúýž"}


def _keyed_edit_away(scope: TenantScope, term: str, language: str) -> tuple[Correction, tuple[str, ...]] | None:
    """In a keyed language the vocabulary holds lemmas, never the inflected word one edit away:
    `vrtáit` is a swap from `vrátit`, a form the dictionary knows, whose lemma the visible
    chunks hold. The term is the typed word itself (an unknown word is its own lemma); each of
    its variants stands for its lemma, which is the variant itself where the dictionary does
    not know it (`pamlsky`: the pages' word is their key), and the most frequent visible one
    wins. With the correction come the variant's full-weight keys the chunks hold (its lemma,
    and its stem where the language has a stemmer), so the corrected word weighs in the gate's
    coverage nearly as the spelled word does: its lemma alone weighed a third of it."""
    if not is_misspelt(term, language):
        return None
    lemmas: dict[str, str] = {}
    for variant in sorted(one_edit(term, letters=_LETTERS + _KEYED_LETTERS.get(language, ""))):
        lemmas.setdefault(dictionary_lemma(variant, language)[0], variant)
    found = scope.document_frequencies(sorted(lemmas)) if lemmas else {}
    if not found:
        return None
    best = max(sorted(found), key=lambda candidate: found[candidate])
    full = [k.key for k in word_keys(lemmas[best], language=language, question=True) if k.weight == 1.0]
    held = scope.document_frequencies(full)
    return (Correction(term, best, round(1 - 1 / len(term), 3), kind="edit"),
            (best, *(key for key in full if key != best and held.get(key, 0) > 0)))


def resolve_dotted_parts(scope: TenantScope, lexemes: tuple[str, ...], df: dict[str, int], *,
                         written: dict[str, str]) -> tuple[tuple[str, ...], list[Correction]]:
    """Each term the visible chunks lack whose written word (`written`: lexeme → word) is one
    dotted part of an identifier they hold becomes that identifier: `DatabaseCache` searches for
    `django.core.cache.backends.db.databasecache`. Before typo correction, which would move the
    word to a look-alike, and before 0051's rule, which would call a written name unknown."""
    resolved: list[str] = []
    corrections: list[Correction] = []
    for term in lexemes:
        word = written.get(term)
        if df.get(term, 0) > 0 or word is None or len(word) < _MIN_LENGTH:
            resolved.append(term)
            continue
        found = scope.terms_with_part(word, limit=1)
        if found:
            corrections.append(Correction(term, found[0][0], 1.0, kind="part"))
            resolved.append(found[0][0])
        else:
            resolved.append(term)
    return tuple(dict.fromkeys(resolved)), corrections


_SHORTHAND = Path(__file__).resolve().parent / "data" / "chat-shorthand.txt"


@cache
def chat_shorthand() -> frozenset[str]:
    lines = _SHORTHAND.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def coined_words(lexemes: tuple[str, ...], df: dict[str, int], *, written: dict[str, str], language: str,
                 names: frozenset[str]) -> tuple[str, ...]:
    """Terms still unmatched after typo correction whose written word is one plain word no
    dictionary of the language knows (`certbot`, `matplotlib`): a product the pages never
    mention, written in lower case, which 0051's rule would otherwise miss (0077). A word the
    dictionary knows (`many`, `frontend`) is only absent from these pages, one edit from such a
    word (`lnog`) it is a typo, chat shorthand (`asap`, retrieval/data/chat-shorthand.txt) is
    about nothing, and a word with a dot, dash, digit or underscore is the asker's own
    identifier or file name. Without a dictionary of the language no word is coined: every
    word would be one the dictionary does not know."""
    if not has_dictionary(language):
        return ()
    coined = []
    for term in lexemes:
        word = written.get(term)
        if (df.get(term, 0) == 0 and term not in names and word is not None and word.isalpha()
                and len(word) >= _MIN_LENGTH and word not in chat_shorthand()
                and not dictionary_lemma(word, language)[1] and not near_a_word(word, language)):
            coined.append(term)
    return tuple(coined)


def near_a_word(word: str, language: str) -> bool:
    """Whether a word one edit from `word` is one the dictionary knows: `lnog` is a hurried
    `long` (a typo of a word these pages may lack), never a product's name (0099)."""
    return any(dictionary_lemma(variant, language)[1] for variant in one_edit(word))
