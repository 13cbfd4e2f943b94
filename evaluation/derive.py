"""Derive golden cases for a demo tenant from its declared facts (corpus/demo/facts/<tenant>.yaml)
and its documents (audiences, supersession, titles, the manifest's conflicts).

The output is a starting point: the committed sets (evaluation/golden/demo-<tenant>.yaml) may be
edited by hand, and corpus/tests/test_demo_facts.py holds every case to the declared facts.
Every case type of the format is covered: normal, multi-turn, must-abstain, stale, conflict,
audience probe, tenant probe and greeting.
"""

from __future__ import annotations

from typing import Any

from corpus.demo.declared import (
    TENANTS,
    Declared,
    Fact,
    Locator,
    document_key,
    read_declared,
    read_documents,
    tenant_folder,
    text_under,
)
from corpus.ingest.manifest import load_manifest
from corpus.parsers import ParsedDocument
from evaluation.golden import Case, GoldenSet
from evaluation.golden import Locator as GoldenLocator

GREETINGS = ("hi there!", "Thanks so much!")
Documents = dict[tuple[str, str], ParsedDocument]


def _audience(fact: Fact, documents: Documents) -> str:
    return documents[document_key(fact.where)].audience or "public"


def _superseded(fact: Fact, documents: Documents) -> bool:
    return fact.where["source"] == "doc" and any(
        d.supersedes == fact.where["slug"] for d in documents.values() if d.source_type == "doc")


def _normal(declared: Declared, public: list[Fact], max_normal: int) -> list[dict[str, Any]]:
    return [{"id": f"{declared.tenant}-n{n:03d}", "type": "normal", "question": fact.question, "history": [],
             "expected": [dict(fact.where)], "must_contain": [fact.text]}
            for n, fact in enumerate(public[:max_normal], start=1)]


def _multi_turn(declared: Declared, public: list[Fact], documents: Documents) -> list[dict[str, Any]]:
    """Ask about one section, then follow up about another section of the same page."""
    by_doc: dict[tuple[str, str], list[Fact]] = {}
    for fact in public:
        by_doc.setdefault(document_key(fact.where), []).append(fact)
    cases: list[dict[str, Any]] = []
    for key, group in sorted(by_doc.items()):
        headings = {f.where["heading"]: f for f in group}
        if len(headings) < 2 or key[0] != "doc":
            continue
        first, second = list(headings.values())[:2]
        cases.append({
            "id": f"{declared.tenant}-m{len(cases) + 1:03d}", "type": "multi_turn",
            "question": f"ok and what about {second.where['heading'].lower()}?",
            "history": [{"role": "user", "content": first.question},
                        {"role": "assistant", "content": f"{first.text} (from {documents[key].title})."}],
            "expected": [dict(second.where)], "must_contain": [],
        })
        if len(cases) >= 6:
            break
    return cases


def _declared_cases(declared: Declared) -> list[dict[str, Any]]:
    """Must-abstain, stale and conflict cases, as declared."""
    slug = declared.tenant
    cases: list[dict[str, Any]] = [
        {"id": f"{slug}-a{n:03d}", "type": "must_abstain", "question": item.question, "history": [],
         "expected": [], "must_not_contain": list(item.absent)}
        for n, item in enumerate(declared.must_abstain, start=1)]
    cases += [{"id": f"{slug}-s{n:03d}", "type": "stale", "question": item.question, "history": [],
               "expected": [dict(item.where)], "must_contain": [item.text], "must_not_contain": [item.outdated]}
              for n, item in enumerate(declared.stale, start=1)]
    manifest = {c.id: c for c in load_manifest(tenant_folder(slug))}
    cases += [{"id": f"{slug}-c{n:03d}", "type": "conflict", "question": question, "history": [],
               "expected": [{"source": d.source_type, "slug" if d.source_type == "doc" else "id": d.slug}
                            for d in manifest[conflict_id].documents],
               "must_contain": ["disagree"]}
              for n, (conflict_id, question) in enumerate(declared.conflicts.items(), start=1)]
    return cases


def derive_cases(declared: Declared, documents: Documents, *, other: str | None = None,
                 max_normal: int = 40) -> dict[str, Any]:
    slug = declared.tenant
    facts = declared.facts
    public = [f for f in facts if _audience(f, documents) == "public"
              and not _superseded(f, documents) and not f.contested]
    cases = _normal(declared, public, max_normal) + _multi_turn(declared, public, documents)
    cases += _declared_cases(declared)
    internal = [f for f in facts if _audience(f, documents) == "internal"]
    cases += [{"id": f"{slug}-p{n:03d}", "type": "audience_probe", "question": fact.question,
               "audience": "public", "history": [], "expected": [dict(fact.where)],
               "must_not_contain": [fact.text]} for n, fact in enumerate(internal[:3], start=1)]
    if other is not None:
        cases += [{"id": f"{slug}-t{n:03d}", "type": "tenant_probe", "question": fact.question, "tenant": other,
                   "history": [], "expected": [dict(fact.where)]} for n, fact in enumerate(public[:3], start=1)]
    cases += [{"id": f"{slug}-g{n:03d}", "type": "greeting", "question": text, "history": [], "expected": []}
              for n, text in enumerate(GREETINGS, start=1)]
    return {"tenant": slug, "audience": "public", "cases": cases}


def derive_for(slug: str) -> dict[str, Any]:
    if slug not in TENANTS:
        raise ValueError(f"no declared facts for tenant {slug!r} (known: {', '.join(sorted(TENANTS))})")
    other = next((s for s in TENANTS if s != slug), None)
    return derive_cases(read_declared(slug), read_documents(tenant_folder(slug)), other=other)


def _at(where: Locator, locator: GoldenLocator) -> bool:
    """A declared location inside what a golden locator names (the whole document when it has no heading)."""
    return (document_key(where) == (locator.source, locator.document_slug)
            and (not locator.heading or locator.heading.lower() == where["heading"].lower()))


def _located(case: Case, declared: Declared, documents: Documents) -> list[str]:
    problems: list[str] = []
    for locator in case.expected:
        document = documents.get((locator.source, locator.document_slug))
        if document is None:
            problems.append(f"expected {locator.describe()}: no such document")
        elif locator.heading and not text_under(document, locator.heading):
            problems.append(f"expected {locator.describe()}: no such heading")
    if case.type in ("normal", "multi_turn", "stale", "audience_probe", "tenant_probe") and not case.expected:
        problems.append("expects no document")
    texts = [f.text for f in declared.facts if any(_at(f.where, loc) for loc in case.expected)]
    texts += [s.text for s in declared.stale if any(_at(s.where, loc) for loc in case.expected)]
    held = case.must_not_contain if case.type == "audience_probe" else ()
    # A conflict's answer names the disagreement ("disagree"), not one side of it.
    wanted = () if case.type == "conflict" else case.must_contain
    return problems + [f"{term!r} is in no declared fact at the expected locators"
                       for term in (*wanted, *held) if not any(term in text for text in texts)]


def _by_type(case: Case, golden: GoldenSet, declared: Declared, documents: Documents) -> list[str]:
    if case.type == "must_abstain":
        absent = {a.question: a.absent for a in declared.must_abstain}
        if case.question not in absent:
            return ["question is not declared must-abstain"]
        return [f"{t!r} is not declared absent" for t in case.must_not_contain if t not in absent[case.question]]
    if case.type == "stale":
        if not any(_at(s.where, case.expected[0]) and s.text in case.must_contain and s.outdated in
                   case.must_not_contain for s in declared.stale):
            return ["no declared stale answer with this location, text and outdated text"]
    if case.type == "conflict":
        manifest = {c.id: c for c in load_manifest(tenant_folder(golden.tenant))}
        sides = {(loc.source, loc.document_slug) for loc in case.expected}
        if not any(sides == {(d.source_type, d.slug) for d in manifest[conflict_id].documents}
                   for conflict_id in declared.conflicts if conflict_id in manifest):
            return ["its documents are not the two sides of a declared conflict in the manifest"]
    if case.type == "audience_probe":
        readable = {"public", case.audience or golden.audience}
        return [f"{loc.describe()} is readable by {case.audience}" for loc in case.expected
                if (documents[(loc.source, loc.document_slug)].audience or "public") in readable]
    if case.type == "tenant_probe" and (case.tenant not in TENANTS or case.tenant == golden.tenant):
        return [f"probes {case.tenant!r}, not the other demo tenant"]
    return []


def golden_problems(golden: GoldenSet) -> list[str]:
    """The inverse of deriving: every case of a demo golden set held to its tenant's declared
    facts and documents (expected documents and headings exist, checked terms are declared)."""
    declared = read_declared(golden.tenant)
    documents = read_documents(tenant_folder(golden.tenant))
    problems: list[str] = []
    for case in golden.cases:
        found = _located(case, declared, documents)
        if not found:
            found = _by_type(case, golden, declared, documents)
        problems += [f"{case.id}: {problem}" for problem in found]
    return problems
