"""Typo correction against the asker's own visible vocabulary (pg_trgm over term statistics).

Only a query term that the asker's visible chunks never contain is corrected, and only to a
term those same chunks do contain: the vocabulary is read through the scope, so a correction
can never reveal a word from another tenant or a hidden audience.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from corpus.language.keys import NAMESPACE_MARK, dictionary_lemma
from tenants.scope import TenantScope

_MIN_LENGTH = 4
# The trigram similarity a vocabulary term needs to stand in for an absent question word.
TYPO_SIMILARITY_MIN = 0.45


@dataclass(frozen=True)
class Correction:
    original: str
    corrected: str
    similarity: float
    kind: str = "typo"  # or "part": the word is one dotted part of an identifier (0075)


def correct_terms(scope: TenantScope, lexemes: tuple[str, ...], df: dict[str, int], *,
                  names: frozenset[str] = frozenset()) -> tuple[tuple[str, ...], list[Correction]]:
    """`names`: lexemes of words written as names (retrieval.querytext.written_names), which are
    never corrected: a name the corpus lacks stays a term it lacks, for the gate to see."""
    corrected: list[str] = []
    corrections: list[Correction] = []
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
        else:
            corrected.append(term)
    return tuple(dict.fromkeys(corrected)), corrections


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


@cache
def has_dictionary(language: str) -> bool:
    """Whether simplemma has a dictionary for the tenant's language; without one no word is
    coined, rather than every search of such a tenant failing on the unknown language."""
    try:
        dictionary_lemma("word", language)
    except ValueError:
        return False
    return True


def coined_words(lexemes: tuple[str, ...], df: dict[str, int], *, written: dict[str, str], language: str,
                 names: frozenset[str]) -> tuple[str, ...]:
    """Terms still unmatched after typo correction whose written word is one plain word no
    dictionary of the language knows (`certbot`, `matplotlib`): a product the pages never
    mention, written in lower case, which 0051's rule would otherwise miss (0077). A word the
    dictionary knows (`many`, `frontend`) is only absent from these pages, chat shorthand (`asap`,
    retrieval/data/chat-shorthand.txt) is about nothing, and a word with a dot, dash, digit or
    underscore is the asker's own identifier or file name."""
    if not has_dictionary(language):
        return ()
    coined = []
    for term in lexemes:
        word = written.get(term)
        if (df.get(term, 0) == 0 and term not in names and word is not None and word.isalpha()
                and len(word) >= _MIN_LENGTH and word not in chat_shorthand()
                and not dictionary_lemma(word, language)[1]):
            coined.append(term)
    return tuple(coined)
