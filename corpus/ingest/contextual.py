"""A provider-free contextualizer: the document's title and its opening sentence, per chunk.

Contextual retrieval prepends a situating blurb to each chunk before it is embedded. The
model-written blurb (answering.pipeline.contextualize) needs a provider; this one says only what the
document itself says about what it is, so it can run offline and be measured as its own arm
(docs/decisions/0022-contextual-blurbs.md). Plug in with
CORPUS_CONTEXTUALIZER = "corpus.ingest.contextual.title_and_summary".
"""

from __future__ import annotations

import re
from typing import Any

_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.S)
_MAX_SUMMARY_CHARS = 200


def summary_sentence(document: Any) -> str:
    for section in document.sections:
        text = " ".join(section.text.split())
        if text:
            match = _SENTENCE.match(text)
            sentence = match.group(1) if match else text
            return sentence[:_MAX_SUMMARY_CHARS].rstrip()
    return ""


def title_and_summary(*, document: Any, chunks: list[str], tenant: Any = None) -> list[str]:
    """`tenant` is what ingest hands every contextualizer (a model-written one bills it); this one calls no one."""
    title = " ".join(str(document.title or "").split())
    summary = summary_sentence(document)
    blurbs = []
    for chunk in chunks:
        # Say only what the chunk does not already say: a repeated line is noise in the vector.
        parts = [p for p in (title, summary) if p and p not in chunk]
        blurbs.append(". ".join(p.rstrip(".") for p in parts) + ("." if parts else ""))
    return blurbs
