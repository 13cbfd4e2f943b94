"""The entity an answer opens with: "`work_mem` (integer, default 4MB): " (docs/decisions/0041).

When the best sentence belongs to a named entity (a parameter, function or setting: the last
part of its chunk's heading path, or a term line just above the sentence), the extractive
answer leads with that name, its kind and its default, each as a cited chunk states them.
"""

from __future__ import annotations

import re

from corpus.ingest.chunking import HEADING_SEPARATOR
from retrieval.search import Candidate

# A heading path's last part that names an entity: an identifier (work_mem, os.path.join,
# --echo-all, DEBUG) alone, with its kind ("work_mem (integer)") or as a signature
# ("full_clean(exclude=None)"). "20.4.1. Memory" and "Serial Types" are headings, not entities.
TERM = re.compile(
    r"(?:(?:class|exception|method|function|attribute|data)\s+)?(?P<name>[A-Za-z_][\w.]*|--?[A-Za-z][\w-]*)"
    r"(?:(?P<signature>\(.*\)(?: …)?)|\s\((?P<kind>[^()]{1,40})\))?"
)
_DEFAULT = re.compile(r"\bdefault(?:\s+value)?(?:\s+is|:)\s+(?:typically\s+|usually\s+)?(?P<value>[^.;\n]{1,60})",
                      re.IGNORECASE)
_PARENTHESISED = re.compile(r"\(\s*([^()\s][^()]{0,23}?)\s*\)")


def chunk_body(candidate: Candidate) -> str:
    """The chunk's text without the heading path its content starts with."""
    prefix = f"{candidate.heading_path}\n\n"
    return candidate.content[len(prefix):] if candidate.content.startswith(prefix) else candidate.content


def default_of(text: str) -> str:
    """The default a definition states, as it states it: "4MB" of "The default is four megabytes (4MB)"."""
    found = _DEFAULT.search(text)
    if found is None:
        return ""
    value = found["value"].strip()
    inner = _PARENTHESISED.search(value)
    if inner is not None:
        return inner[1]
    return value if len(value) <= 24 and len(value.split()) <= 3 else ""


def _entity(heading_path: str) -> re.Match[str] | None:
    return _named_term(heading_path.split(HEADING_SEPARATOR)[-1].strip())


def _term_line(body: str, sentence: str) -> tuple[re.Match[str], str] | None:
    """The term whose definition holds the sentence, and that definition's line: the line just
    above the sentence's, when it is a term alone ("log_min_duration_statement ( integer)").
    A `<dt>` is a line of its section (0041, 0080), and this is where the answer's subject is."""
    lines = body.split("\n")
    at = next((i for i, line in enumerate(lines) if sentence in line), 0)
    found = _named_term(lines[at - 1].strip()) if at > 0 else None
    return (found, lines[at]) if found is not None and not _looks_like_code(found) else None


def _looks_like_code(term: re.Match[str]) -> bool:
    """A line of a code listing passes for a term as well: `BEGIN`, `Decimal('4.68')`,
    `fib(int(sys.argv))`. A definition's term has a kind ("( integer)"), an identifier's
    underscore or dot, or a signature of bare parameter names."""
    if term["kind"]:
        return False
    signature = term["signature"] or ""
    if signature:
        return bool(re.search(r"['\"]|\(.*\(", signature))
    return "_" not in term["name"] and "." not in term["name"]


def _named_term(text: str) -> re.Match[str] | None:
    found = TERM.fullmatch(text)
    if found is None:
        return None
    name = found["name"]
    named = "_" in name or "." in name or name.startswith("-") or (name.isupper() and len(name) > 2)
    return found if found["signature"] or found["kind"] or named else None


def entity_name(heading_path: str) -> str:
    """The entity a chunk belongs to (work_mem of "… > 20.4.1. Memory > work_mem (integer)"), or ""."""
    found = _entity(heading_path)
    return found["name"] if found is not None else ""


def entity_lead(candidate: Candidate, cited: list[Candidate], sentence: str = "") -> str:
    """"`work_mem` (integer, default 4MB): " when the chunk's heading path ends in an entity, or
    the sentence's line is defined under a term line of the chunk; else "".

    Every word of it is in a cited chunk: the name and kind in its heading path or term line,
    the default in the body of a cited chunk of the same entity (or in the term's definition)."""
    found, bodies = _entity(candidate.heading_path), []
    if found is not None:
        bodies = [chunk_body(c) for c in cited if c.document_id == candidate.document_id
                  and c.heading_path == candidate.heading_path]
    elif sentence:
        term = _term_line(chunk_body(candidate), sentence)
        found, bodies = (term[0], [term[1]]) if term is not None else (None, [])
    if found is None:
        return ""
    name, signature, kind = found["name"], found["signature"], (found["kind"] or "").strip()
    default = next((d for d in map(default_of, bodies) if d), "")
    details = ", ".join(part for part in (kind or "", f"default {default}" if default else "") if part)
    shown = f"`{name}{signature}`" if signature else f"`{name}`"
    return f"{shown} ({details}): " if details else f"{shown}: "
