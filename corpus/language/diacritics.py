"""A question typed without diacritics, written again with them before it is searched
(docs/decisions/0114).

"kde zjistim kolik mam jeste volneho mista na disku" reaches the keyword leg through folded and
prefix keys at half weight, but multilingual-e5 reads it far from the page it means, and its
low cosines label no chunk as evidence. Each word the dictionary does not know is looked up among
the dictionary's forms that fold to it ("volneho" → "volného"); where several do ("mista" →
"místa" of místo, "místa" of mísa), the tenant's own pages choose: the form whose lemma the most
visible chunks hold. A word no visible chunk's lemma explains stays as typed.

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
                       lemma_frequency: Callable[[Sequence[str]], Mapping[str, int]]) -> str:
    """`text` with each unknown bare word replaced by the dictionary form its folding names and
    the tenant's chunks hold most (`lemma_frequency`: lemma → visible chunks holding it)."""
    if (language not in WRITTEN_WITH_DIACRITICS or language not in KEYED_LANGUAGES
            or not lacks_diacritics(text) or not has_dictionary(language)):
        return text
    forms = _folded_forms(language)
    candidates: dict[str, tuple[str, ...]] = {}
    for word in {m.group(0).lower() for m in _WORD.finditer(text)}:
        if word in forms and not dictionary_lemma(word, language)[1]:
            candidates[word] = forms[word]
    if not candidates:
        return text
    lemma_of = {form: dictionary_lemma(form, language)[0] for group in candidates.values() for form in group}
    frequency = lemma_frequency(sorted(set(lemma_of.values())))
    chosen = {}
    for word, group in candidates.items():
        best = max(group, key=lambda form: (frequency.get(lemma_of[form], 0), form))
        if frequency.get(lemma_of[best], 0) > 0:
            chosen[word] = best
    if not chosen:
        return text
    return _WORD.sub(lambda m: _cased(m.group(0), chosen.get(m.group(0).lower())), text)


def _cased(typed: str, restored: str | None) -> str:
    if restored is None:
        return typed
    return restored.capitalize() if typed[:1].isupper() else restored
