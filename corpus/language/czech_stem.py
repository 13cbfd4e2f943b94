"""A light Czech stemmer: case endings and possessive suffixes off, the softened consonant
restored (`lišce` → `lišk`, like `liška`).

The published light stemmer of Dolamic and Savoy (2009, "Indexing and stemming approaches for
the Czech language"), written here from its description: no dictionary, no dependency. It
only conflates what the lemmatiser does not know; the lemma is the main key (corpus.language.keys).
"""

from __future__ import annotations

# (minimum word length, suffixes, palatalise after cutting?) in the order the algorithm tries them.
_CASE_RULES: tuple[tuple[int, tuple[str, ...], bool, int], ...] = (
    (8, ("atech",), False, 5),
    (7, ("ětem",), True, 3),
    (7, ("atům",), False, 4),
    (6, ("ech", "ich", "ích", "ého", "ěmi", "emi", "ému", "ete", "eti", "iho", "ího", "ími", "imu"), True, 2),
    (6, ("ách", "ata", "aty", "ých", "ama", "ami", "ové", "ovi", "ými"), False, 3),
    (5, ("em",), True, 1),
    (5, ("es", "ém", "ím"), True, 2),
    (5, ("ům", "at", "ám", "os", "us", "ým", "mi", "ou"), False, 2),
    (4, ("e", "i", "í", "ě"), True, 0),
    (4, ("u", "y", "ů", "a", "o", "á", "é", "ý"), False, 1),
)

_PALATAL = (
    (("ci", "ce", "či", "če"), 2, "k"),
    (("zi", "ze", "ži", "že"), 2, "h"),
    (("čtě", "čti", "čtí"), 3, "ck"),
    (("ště", "šti", "ští"), 3, "sk"),
)


def _palatalise(word: str) -> str:
    for endings, cut, replacement in _PALATAL:
        if word.endswith(endings):
            return word[:-cut] + replacement
    return word[:-1]


def _remove_case(word: str) -> str:
    for minimum, suffixes, palatalise, cut in _CASE_RULES:
        if len(word) < minimum:
            continue
        for suffix in suffixes:
            if word.endswith(suffix):
                stem = word[:-cut] if cut else word
                return _palatalise(stem) if palatalise else stem
    return word


def _remove_possessive(word: str) -> str:
    if len(word) > 5:
        if word.endswith(("ov", "ův")):
            return word[:-2]
        if word.endswith("in"):
            return _palatalise(word[:-1])
    return word


def light_stem(word: str) -> str:
    """The stem of one lower-case word."""
    return _remove_possessive(_remove_case(word))
