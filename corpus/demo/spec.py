"""The demo corpus as declared facts: typed, frozen, and the single source of truth.

Prose is generated from these declarations (templates.py), and golden eval cases are meant to
be derived from them too, so a fact, the question a customer would ask about it, and where it
lives (source, slug or id, heading) are declared together and can never drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Audience = Literal["public", "customer", "internal"]
SourceType = Literal["doc", "changelog", "ticket"]
# The kind picks the family of paragraph templates that surround a section's declared sentences.
SectionKind = Literal["overview", "steps", "reference", "notes", "troubleshooting"]

_MARK = re.compile(r"\[\[(.+?)\]\]")


@dataclass(frozen=True)
class Fact:
    """A literal that must appear verbatim, the sentence carrying it, and a customer's question."""

    literal: str
    sentence: str
    question: str

    def __post_init__(self) -> None:
        if self.literal not in self.sentence:
            raise ValueError(f"fact sentence does not carry its literal {self.literal!r}: {self.sentence!r}")


def F(marked: str, question: str) -> Fact:
    """Declare a fact inline: the literal is the single [[bracketed]] part of the sentence.

    Writing the literal once, inside its sentence, keeps the literal and the prose from drifting.
    """
    found = _MARK.findall(marked)
    if len(found) != 1:
        raise ValueError(f"mark exactly one literal with [[...]]: {marked!r}")
    return Fact(literal=found[0], sentence=_MARK.sub(r"\1", marked), question=question)


@dataclass(frozen=True)
class Section:
    """A `##` section (or a `###` subsection when nested) of a doc or changelog entry."""

    heading: str
    kind: SectionKind
    facts: tuple[Fact, ...] = ()
    notes: tuple[str, ...] = ()  # hand-written sentences that carry no declared fact
    steps: tuple[str, ...] = ()  # rendered as a numbered list
    subsections: tuple[Section, ...] = ()

    def walk(self) -> Iterator[Section]:
        yield self
        for sub in self.subsections:
            yield from sub.walk()


@dataclass(frozen=True)
class DocSpec:
    slug: str  # path relative to docs/ without .md
    title: str
    topic: str  # noun phrase the templates talk about ("webhook deliveries")
    sections: tuple[Section, ...]
    audience: Audience = "public"
    version: str | None = None
    effective_date: str | None = None  # YYYY-MM-DD
    supersedes: str | None = None  # slug of the older doc this one replaces

    def placed_facts(self) -> Iterator[tuple[str, Fact]]:
        for section in self.sections:
            for part in section.walk():
                for fact in part.facts:
                    yield part.heading, fact


@dataclass(frozen=True)
class ChangelogEntry:
    id: str
    title: str
    date: str
    version: str
    topic: str
    sections: tuple[Section, ...]  # rendered as `###` subsections of the body
    audience: Audience = "public"

    def placed_facts(self) -> Iterator[tuple[str, Fact]]:
        for section in self.sections:
            for fact in section.facts:
                yield section.heading, fact


@dataclass(frozen=True)
class Ticket:
    id: str
    subject: str
    question: str  # the customer's own words
    resolution: str  # the agent's lead; fact sentences follow it
    resolved_at: str
    facts: tuple[Fact, ...]
    audience: Audience = "customer"

    def placed_facts(self) -> Iterator[tuple[str, Fact]]:
        # A ticket has no headings; its chunks' heading path can only carry the subject.
        for fact in self.facts:
            yield self.subject, fact


@dataclass(frozen=True)
class DocRef:
    """Addresses one document the way the ingest pipeline and golden locators do."""

    source: SourceType
    key: str  # slug for docs, id for changelog entries and tickets

    def manifest_entry(self) -> dict[str, str]:
        return {"source": self.source, "slug" if self.source == "doc" else "id": self.key}

    def locator(self, heading: str | None = None) -> dict[str, str]:
        found = self.manifest_entry()
        if heading:
            found["heading"] = heading
        return found


@dataclass(frozen=True)
class Conflict:
    """Two live documents that disagree, recorded only in the manifest (an unmarked conflict)."""

    id: str
    note: str
    match: str  # case-insensitive substring marking the contested chunks
    documents: tuple[DocRef, ...]
    literals: tuple[str, ...]  # the disagreeing values, one per document, same order
    question: str


@dataclass(frozen=True)
class StaleQuestion:
    """Asks for a fact a newer doc superseded: the answer must carry the current value only."""

    question: str
    current: DocRef
    heading: str
    current_literal: str
    outdated_literal: str


@dataclass(frozen=True)
class AbstainQuestion:
    """On-topic, but unanswerable from the corpus; absent_terms must appear nowhere in it."""

    question: str
    absent_terms: tuple[str, ...]


@dataclass(frozen=True)
class FactRecord:
    """One fact, flattened with everything a golden-set deriver needs to build a case."""

    tenant: str
    source: SourceType
    key: str
    title: str
    heading: str
    question: str
    literal: str
    audience: Audience
    # A deriver should not build a plain "normal" case from these: a superseded fact is the
    # wrong answer by design (see StaleQuestion), a contested one has two answers (see Conflict).
    superseded: bool = False
    contested: bool = False

    def locator(self) -> dict[str, str]:
        return DocRef(self.source, self.key).locator(self.heading)


@dataclass(frozen=True)
class TenantSpec:
    slug: str
    name: str
    domain: str
    docs: tuple[DocSpec, ...]
    changelog: tuple[ChangelogEntry, ...]
    tickets: tuple[Ticket, ...]
    conflicts: tuple[Conflict, ...]
    stale: tuple[StaleQuestion, ...]
    abstain: tuple[AbstainQuestion, ...]

    @property
    def document_count(self) -> int:
        return len(self.docs) + len(self.changelog) + len(self.tickets)

    def doc(self, slug: str) -> DocSpec:
        for doc in self.docs:
            if doc.slug == slug:
                return doc
        raise KeyError(slug)

    def facts(self) -> list[FactRecord]:
        """Every declared fact, flattened, in declaration order (docs, changelog, tickets)."""
        found: list[FactRecord] = []
        for doc in self.docs:
            for heading, fact in doc.placed_facts():
                found.append(self._record("doc", doc.slug, doc.title, heading, fact, doc.audience))
        for entry in self.changelog:
            for heading, fact in entry.placed_facts():
                found.append(self._record("changelog", entry.id, entry.title, heading, fact, entry.audience))
        for ticket in self.tickets:
            for heading, fact in ticket.placed_facts():
                found.append(self._record("ticket", ticket.id, ticket.subject, heading, fact, ticket.audience))
        return found

    def _record(
        self, source: SourceType, key: str, title: str, heading: str, fact: Fact, audience: Audience
    ) -> FactRecord:
        superseded = source == "doc" and any(doc.supersedes == key for doc in self.docs)
        contested = any(
            ref == DocRef(source, key) and literal == fact.literal
            for conflict in self.conflicts
            for ref, literal in zip(conflict.documents, conflict.literals, strict=True)
        )
        return FactRecord(
            self.slug, source, key, title, heading, fact.question, fact.literal, audience, superseded, contested
        )

    def audience_of(self, ref: DocRef) -> Audience:
        pool: dict[tuple[str, str], Audience] = {("doc", d.slug): d.audience for d in self.docs}
        pool.update({("changelog", e.id): e.audience for e in self.changelog})
        pool.update({("ticket", t.id): t.audience for t in self.tickets})
        return pool[(ref.source, ref.key)]


def validate(tenant: TenantSpec) -> list[str]:
    """Declaration mistakes (dangling references, duplicate ids); empty when the spec is sound."""
    problems: list[str] = []
    keys = [("doc", d.slug) for d in tenant.docs]
    keys += [("changelog", e.id) for e in tenant.changelog] + [("ticket", t.id) for t in tenant.tickets]
    problems += [f"{tenant.slug}: duplicate {k}" for k in sorted(set(keys)) if keys.count(k) > 1]
    known = set(keys)
    for doc in tenant.docs:
        if doc.supersedes and ("doc", doc.supersedes) not in known:
            problems.append(f"{tenant.slug}: {doc.slug} supersedes unknown {doc.supersedes}")
        headings = [s.heading.lower() for s in doc.sections for s in s.walk()]
        problems += [f"{tenant.slug}: {doc.slug} repeats heading {h!r}" for h in set(headings) if headings.count(h) > 1]
    for conflict in tenant.conflicts:
        for ref in conflict.documents:
            if (ref.source, ref.key) not in known:
                problems.append(f"{tenant.slug}: conflict {conflict.id} names unknown {ref}")
    for stale in tenant.stale:
        if (stale.current.source, stale.current.key) not in known:
            problems.append(f"{tenant.slug}: stale question names unknown {stale.current}")
    literals = [f.literal for f in tenant.facts()]
    problems += [f"{tenant.slug}: literal declared twice {x!r}" for x in sorted(set(literals)) if literals.count(x) > 1]
    return problems


def all_tenants() -> list[TenantSpec]:
    # Imported here because the tenant modules import the types above.
    from corpus.demo.spec_helpwise import HELPWISE
    from corpus.demo.spec_paylane import PAYLANE

    return [PAYLANE, HELPWISE]
