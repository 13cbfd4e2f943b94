"""A question typed without diacritics, written again with them before it is searched
(docs/decisions/0114).

"kde zjistim kolik mam jeste volneho mista na disku" reaches the keyword leg through folded and
prefix keys at half weight, but multilingual-e5 reads it far from the page it means, and its
low cosines label no chunk as evidence. Each word the dictionary does not know is looked up among
the dictionary's forms that fold to it ("volneho" → "volného"); where several do ("mista" →
"místa" of místo, "místa" of mísa), the tenant's own pages choose: the form whose lemma the most
visible chunks hold. A word no visible chunk's lemma explains stays as typed.

A word the dictionary lacks ("dobirku": dobírka is not in simplemma's Czech, nor are a fifth of
the accented words on the demo and GNOME help pages, "bezdratove" among them) is looked up in
the tenant's own vocabulary: its terms that fold to the word, the most frequent chosen
(docs/decisions/0135).

Only a question with no diacritic at all is rewritten: in a question that has some, an unknown
bare word is a name or a typo, not a keyboard without accents.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence

from corpus.language.keys import KEYED_LANGUAGES, dictionary_lemma, fold, has_dictionary

# The languages whose alphabet has diacritics a keyboard may lack; keyed, with a dictionary.
WRITTEN_WITH_DIACRITICS = ("cs", "sk")
_WORD = re.compile(r"[^\W\d_]+")
# Shorter unknown words are looked up in the dictionary only: "mas", "jit" fold from too much.
MIN_VOCABULARY_WORD = 4
# A question with more words the dictionary lacks is not Czech typed without accents but noise
# (a 4,000-character question of invented words built a 16,000-character expression, 0.5 s).
MAX_VOCABULARY_WORDS = 8
_lock = threading.Lock()
_forms: dict[str, dict[str, tuple[str, ...]]] = {}


def lacks_diacritics(text: str) -> bool:
    return fold(text) == text


def _folded_forms(language: str) -> dict[str, tuple[str, ...]]:
    """Every lower-case form of the language's dictionary that has diacritics, by its folded
    spelling: built once per process and language (cs: 0.4 s, ~20 MB)."""
    built = _forms.get(language)
    if built is not None:
        return built
    with _lock:
        if language not in _forms:
            from simplemma.strategies.dictionaries import DefaultDictionaryFactory

            table: dict[str, set[str]] = {}
            for form in DefaultDictionaryFactory().get_dictionary(language).keys():
                lowered = form.lower()
                folded = fold(lowered)
                if folded != lowered:
                    table.setdefault(folded, set()).add(lowered)
            _forms[language] = {key: tuple(sorted(forms)) for key, forms in table.items()}
    return _forms[language]


def restore_diacritics(text: str, *, language: str,
                       lemma_frequency: Callable[[Sequence[str]], Mapping[str, int]],
                       terms_matching: Callable[[str], Mapping[str, int]] | None = None) -> str:
    """`text` with each unknown bare word replaced by the dictionary form its folding names and
    the tenant's chunks hold most (`lemma_frequency`: lemma → visible chunks holding it). A word
    the dictionary has no form for takes the tenant's own term that folds to it, if any
    (`terms_matching`: the tenant's terms matching a regular expression → visible chunks)."""
    if (language not in WRITTEN_WITH_DIACRITICS or language not in KEYED_LANGUAGES
            or not lacks_diacritics(text) or not has_dictionary(language)):
        return text
    forms = _folded_forms(language)
    candidates: dict[str, tuple[str, ...]] = {}
    undictionaried: list[str] = []
    for word in {m.group(0).lower() for m in _WORD.finditer(text)}:
        if dictionary_lemma(word, language)[1]:
            continue  # a word as typed ("kolik", "mam"): not a keyboard without accents
        if word in forms:
            candidates[word] = forms[word]
        elif len(word) >= MIN_VOCABULARY_WORD:
            undictionaried.append(word)
    chosen = _from_dictionary(candidates, language, lemma_frequency) if candidates else {}
    if undictionaried and terms_matching is not None and len(undictionaried) <= MAX_VOCABULARY_WORDS:
        chosen.update(_from_vocabulary(sorted(undictionaried), terms_matching))
    if not chosen:
        return text
    return _WORD.sub(lambda m: _cased(m.group(0), chosen.get(m.group(0).lower())), text)


def _from_dictionary(candidates: Mapping[str, tuple[str, ...]], language: str,
                     lemma_frequency: Callable[[Sequence[str]], Mapping[str, int]]) -> dict[str, str]:
    lemma_of = {form: dictionary_lemma(form, language)[0] for group in candidates.values() for form in group}
    frequency = lemma_frequency(sorted(set(lemma_of.values())))
    chosen = {}
    for word, group in candidates.items():
        best = max(group, key=lambda form: (frequency.get(lemma_of[form], 0), form))
        if frequency.get(lemma_of[best], 0) > 0:
            chosen[word] = best
    return chosen


def _from_vocabulary(words: Sequence[str], terms_matching: Callable[[str], Mapping[str, int]]) -> dict[str, str]:
    """Each word's most frequent accented spelling among the tenant's terms; none when the pages
    hold the word as typed (a bare spelling the tenant itself uses is no missing accent)."""
    spellings: dict[str, dict[str, int]] = {}
    for term, df in terms_matching(folding_pattern(words)).items():
        spellings.setdefault(fold(term), {})[term] = df
    chosen = {}
    for word in words:
        found = spellings.get(word, {})
        accented = {term: df for term, df in found.items() if term != word and df > 0}
        if accented and not found.get(word):
            chosen[word] = max(accented, key=lambda term: (accented[term], term))
    return chosen


def _variants() -> dict[str, str]:
    """Each bare letter with the letters that fold to it in Czech and Slovak."""
    variants: dict[str, str] = {}
    for letter in "áäčďéěíĺľňóôŕřšťúůýž":
        bare = fold(letter)
        variants[bare] = variants.get(bare, bare) + letter
    return variants


_VARIANTS = _variants()


def folding_pattern(words: Sequence[str]) -> str:
    """A regular expression matching, whole, any spelling that folds to one of `words`
    ("dobirku" → `^(?:[dď][oóô]b[ií][rŕř]k[uúů])$`), for PostgreSQL's `~`."""
    def one(word: str) -> str:
        return "".join(f"[{_VARIANTS[ch]}]" if ch in _VARIANTS else re.escape(ch) for ch in word)
    return "^(?:" + "|".join(one(word) for word in words) + ")$"


def _cased(typed: str, restored: str | None) -> str:
    if restored is None:
        return typed
    return restored.capitalize() if typed[:1].isupper() else restored
