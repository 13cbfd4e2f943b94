"""Deterministic prose: declared sentences wrapped in paragraph variants from the phrasebook.

Variants are chosen by a stable hash (sha256) of the document key, section heading and slot, never
by random or by Python's salted hash(), so every run writes byte-identical text. Within one
document a variant is not reused while unused ones remain, so neighbouring sections read
differently.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from corpus.demo import phrasebook
from corpus.demo.spec import ChangelogEntry, DocSpec, Section, Ticket


class VariantPicker:
    """Picks phrase variants for one document, avoiding repeats inside it."""

    def __init__(self, document_key: str, values: dict[str, str]) -> None:
        self._key = document_key
        self._values = values
        self._used: dict[str, set[int]] = {}

    def pick(self, slot: str, options: Sequence[str], anchor: str, heading: str = "") -> str:
        digest = hashlib.sha256(f"{self._key}|{anchor}|{slot}".encode()).digest()
        start = int.from_bytes(digest[:8], "big") % len(options)
        used = self._used.setdefault(slot, set())
        if len(used) >= len(options):
            used.clear()
        index = start
        while index in used:
            index = (index + 1) % len(options)
        used.add(index)
        return options[index].format_map({**self._values, "heading": heading})


def _paragraphs(sentences: Sequence[str], per_paragraph: int = 2) -> list[str]:
    return [" ".join(sentences[i : i + per_paragraph]) for i in range(0, len(sentences), per_paragraph)]


def _section_body(section: Section) -> list[str]:
    """Blocks (paragraphs or lists) carrying the section's declared sentences."""
    sentences = [fact.sentence for fact in section.facts] + list(section.notes)
    blocks: list[str] = []
    if section.kind == "steps" and not section.steps and section.facts:
        # A steps section with nothing but its facts reads best with the facts as the steps.
        facts = [fact.sentence for fact in section.facts]
        blocks.append("\n".join(f"{n}. {sentence}" for n, sentence in enumerate(facts, start=1)))
        sentences = list(section.notes)
    if section.steps:
        blocks.append("\n".join(f"{n}. {step}" for n, step in enumerate(section.steps, start=1)))
    if not sentences:
        return blocks
    if section.kind == "reference":
        blocks.append("\n".join(f"- {sentence}" for sentence in sentences))
    else:
        blocks.extend(_paragraphs(sentences))
    return blocks


def _render_section(section: Section, level: int, picker: VariantPicker) -> list[str]:
    blocks = [f"{'#' * level} {section.heading}"]
    blocks.append(picker.pick(f"open-{section.kind}", phrasebook.OPENERS[section.kind], section.heading))
    blocks.extend(_section_body(section))
    middles = phrasebook.MIDDLES[section.kind]
    blocks.append(picker.pick(f"middle-{section.kind}", middles, section.heading, heading=section.heading))
    blocks.append(picker.pick(f"close-{section.kind}", phrasebook.CLOSERS[section.kind], section.heading))
    for sub in section.subsections:
        blocks.extend(_render_section(sub, level + 1, picker))
    return blocks


def render_doc_body(doc: DocSpec, company: str) -> str:
    """Markdown body (no front matter): one `# Title`, then `##`/`###` sections."""
    picker = VariantPicker(doc.slug, {"company": company, "topic": doc.topic})
    blocks = [f"# {doc.title}", picker.pick("intro", phrasebook.DOC_INTRO, doc.title)]
    blocks.append(picker.pick("intro-second", phrasebook.DOC_INTRO_SECOND, doc.title))
    for section in doc.sections:
        blocks.extend(_render_section(section, 2, picker))
    return "\n\n".join(blocks) + "\n"


def render_changelog_body(entry: ChangelogEntry, company: str) -> str:
    """Markdown body of a changelog entry: an intro, `###` subsections, a closing line."""
    picker = VariantPicker(entry.id, {"company": company, "topic": entry.topic})
    blocks = [picker.pick("intro", phrasebook.CHANGELOG_INTRO, entry.title)]
    for section in entry.sections:
        blocks.append(f"### {section.heading}")
        blocks.extend(_section_body(section))
    blocks.append(picker.pick("outro", phrasebook.CHANGELOG_OUTRO, entry.title))
    return "\n\n".join(blocks)


def render_ticket_resolution(ticket: Ticket, company: str) -> str:
    picker = VariantPicker(ticket.id, {"company": company, "topic": ticket.subject})
    lead = f"{picker.pick('opener', phrasebook.TICKET_OPENER, ticket.subject)} {ticket.resolution}"
    facts = " ".join(fact.sentence for fact in ticket.facts)
    closer = picker.pick("closer", phrasebook.TICKET_CLOSER, ticket.subject)
    return "\n\n".join(part for part in (lead, facts, closer) if part)
