"""Release notes answer questions about releases (docs/decisions/0086).

A manual's release notes name almost every feature once, in one dense line, so for a how-to
question a release note often ranks above the page that explains the feature ("Django 3.2
release notes" first for "What is DEFAULT_AUTO_FIELD for?"). For a question that does not ask
about a release or a version, the best other candidate goes first; the release note stays in
the context, where its one line is often what the answer quotes. A page is release notes by
its title, as every documentation generator here writes one; slugs and paths differ.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

# "E.14. Release 15.5" (DocBook), "Django 3.2 release notes" (Sphinx), "What's New In Python
# 3.11", "Changelog", "Changes in version 2.1", "News for 4.0".
_RELEASE_TITLE = re.compile(
    r"\brelease notes?\b|\brelease \d+(?:\.\d+)*\b|\bwhat[’']?s new\b|\bchange ?log\b|\bchanges in (?:version )?\d"
    r"|\bnews (?:for|in) \d",
    re.IGNORECASE,
)
# A question about when something changed: a version number, or a word asking after releases.
_ASKS_ABOUT_RELEASES = re.compile(
    r"\b\d+\.\d+\b|\breleases\b|\breleased\b|\b(?:which|what|this|that|the|a|next|last|latest|recent|previous"
    r"|minor|major) release\b|\brelease (?:notes?|\d)|\bversions?\b|\bchange ?log\b|\bwhat[’']?s new\b|\bnew in\b"
    r"|\bupgrad(?:e|ed|ing)\b|\bdeprecat\w*|\bintroduced\b|\bwhen (?:did|was|were)\b|\bsince when\b",
    re.IGNORECASE,
)


class Titled(Protocol):
    title: str


C = TypeVar("C", bound=Titled)


def is_release_notes(title: str) -> bool:
    return bool(_RELEASE_TITLE.search(title))


def asks_about_releases(question: str) -> bool:
    return bool(_ASKS_ABOUT_RELEASES.search(question))


def release_notes_not_first(candidates: Sequence[C], *, question: str) -> list[C]:
    """The first candidate that is not release notes moved to the top when release notes stand
    first and the question does not ask about releases; every other candidate keeps its order."""
    ranked = list(candidates)
    if not ranked or asks_about_releases(question) or not is_release_notes(ranked[0].title):
        return ranked
    for index, candidate in enumerate(ranked):
        if not is_release_notes(candidate.title):
            return [candidate, *ranked[:index], *ranked[index + 1:]]
    return ranked
