"""Does a stemmer fit a language? Measured on simplemma's own dictionary of it (docs/decisions/0125).

Every lower-case alphabetic form of three letters or more and its lemma, from the dictionary
simplemma ships for the language. For the light Czech stemmer (corpus/language/czech_stem.py),
with and without its palatalisation step, and two baselines (the four-letter prefix, the word):

- joined: the share of forms whose stem is their lemma's stem (the inflections it conflates);
- precise: of the pairs of forms that share a stem, the share that share a lemma too;
- palatalised: where palatalisation changed a form's stem, the share joined to the lemma's stem
  with it and without it (is the Czech k/c, h/z alternation one the language has?).

No database, no Django: about a minute for Czech and Slovak.

    python bench/stemmer_fit.py cs sk
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from math import comb
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus.language import czech_stem  # noqa: E402
from corpus.language.czech_stem import light_stem  # noqa: E402


def _without_palatalisation(word: str) -> str:
    original = czech_stem._palatalise
    czech_stem._palatalise = lambda word: word[:-1]  # the step's "else" branch: the vowel cut only
    try:
        return light_stem(word)
    finally:
        czech_stem._palatalise = original


SCHEMES: dict[str, Callable[[str], str]] = {
    "czech light stem": light_stem,
    "czech light stem, no palatalisation": _without_palatalisation,
    "four-letter prefix": lambda word: word[:4],
    "the word itself": lambda word: word,
}


def dictionary_pairs(*, language: str) -> Iterator[tuple[str, str]]:
    """(form, lemma) of every lower-case alphabetic form of three letters or more."""
    from simplemma.strategies.dictionaries.dictionary_factory import _load_dictionary_from_disk

    for raw_form, raw_lemma in _load_dictionary_from_disk(language).items():
        form, lemma = raw_form.decode(), raw_lemma.decode()
        if form.isalpha() and form.islower() and lemma.islower() and len(form) >= 3:
            yield form, lemma


def fit(*, pairs: list[tuple[str, str]], stem: Callable[[str], str]) -> tuple[float, float]:
    """(joined, precise) as the module docstring defines them."""
    buckets: dict[str, Counter[str]] = defaultdict(Counter)
    joined = 0
    for form, lemma in pairs:
        stemmed = stem(form)
        joined += stemmed == stem(lemma)
        buckets[stemmed][lemma] += 1
    same = sum(comb(count, 2) for bucket in buckets.values() for count in bucket.values())
    shared = sum(comb(sum(bucket.values()), 2) for bucket in buckets.values())
    return joined / len(pairs), (same / shared if shared else 1.0)


def palatalised(*, pairs: list[tuple[str, str]]) -> tuple[int, float, float]:
    """(forms whose stem palatalisation changed, joined with it, joined without it)."""
    changed = with_it = without_it = 0
    for form, lemma in pairs:
        if len(form) < 4 or light_stem(form) == _without_palatalisation(form):
            continue
        changed += 1
        with_it += light_stem(form) == light_stem(lemma)
        without_it += _without_palatalisation(form) == _without_palatalisation(lemma)
    return changed, with_it / changed, without_it / changed


def main(languages: list[str]) -> None:
    for language in languages:
        pairs = list(dictionary_pairs(language=language))
        print(f"{language}: {len(pairs)} forms")
        for name, stem in SCHEMES.items():
            joined, precise = fit(pairs=pairs, stem=stem)
            print(f"  {name:38} joined {joined:.3f}  precise {precise:.3f}")
        changed, with_it, without_it = palatalised(pairs=pairs)
        print(f"  palatalisation changed {changed} stems: joined {with_it:.3f} with it, {without_it:.3f} without")


if __name__ == "__main__":
    main(sys.argv[1:] or ["cs", "sk"])
