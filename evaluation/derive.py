"""Derive golden cases from the demo corpus specification: the declared facts say what is true.

The output is committed (evaluation/golden/demo-<tenant>.yaml) and edited by hand afterwards;
re-deriving overwrites it, so hand edits belong in a copy or in the spec. Every case type of
the format is covered: normal, multi-turn, must-abstain, stale, conflict, audience probe,
tenant probe and greeting.
"""

from __future__ import annotations

from typing import Any

from corpus.demo.spec import FactRecord, TenantSpec, all_tenants

GREETINGS = ("hi there!", "Thanks so much!")


def _locator(fact: FactRecord) -> dict[str, Any]:
    return dict(fact.locator())


def derive_cases(spec: TenantSpec, *, other: TenantSpec | None = None, max_normal: int = 40) -> dict[str, Any]:
    facts = spec.facts()
    public = [f for f in facts if f.audience == "public" and not f.superseded and not f.contested]
    cases: list[dict[str, Any]] = []
    for n, fact in enumerate(public[:max_normal], start=1):
        cases.append({"id": f"{spec.slug}-n{n:03d}", "type": "normal", "question": fact.question, "history": [],
                      "expected": [_locator(fact)], "must_contain": [fact.literal]})
    # Multi-turn: ask about one section, then follow up about another section of the same page.
    by_doc: dict[tuple[str, str], list[FactRecord]] = {}
    for fact in public:
        by_doc.setdefault((fact.source, fact.key), []).append(fact)
    turns = 0
    for (_, _), group in sorted(by_doc.items()):
        headings = {f.heading: f for f in group}
        if len(headings) < 2 or group[0].source != "doc":
            continue
        first, second = list(headings.values())[:2]
        turns += 1
        cases.append({
            "id": f"{spec.slug}-m{turns:03d}", "type": "multi_turn",
            "question": f"ok and what about {second.heading.lower()}?",
            "history": [{"role": "user", "content": first.question},
                        {"role": "assistant", "content": f"{first.literal} (from {first.title})."}],
            "expected": [_locator(second)], "must_contain": [],
        })
        if turns >= 6:
            break
    for n, abstain in enumerate(spec.abstain, start=1):
        cases.append({"id": f"{spec.slug}-a{n:03d}", "type": "must_abstain", "question": abstain.question,
                      "history": [], "expected": [], "must_not_contain": list(abstain.absent_terms)})
    for n, stale in enumerate(spec.stale, start=1):
        cases.append({"id": f"{spec.slug}-s{n:03d}", "type": "stale", "question": stale.question, "history": [],
                      "expected": [stale.current.locator(stale.heading)], "must_contain": [stale.current_literal],
                      "must_not_contain": [stale.outdated_literal]})
    for n, conflict in enumerate(spec.conflicts, start=1):
        cases.append({"id": f"{spec.slug}-c{n:03d}", "type": "conflict", "question": conflict.question,
                      "history": [], "expected": [d.locator() for d in conflict.documents],
                      "must_contain": ["disagree"]})
    internal = [f for f in facts if f.audience == "internal"]
    for n, fact in enumerate(internal[:3], start=1):
        cases.append({"id": f"{spec.slug}-p{n:03d}", "type": "audience_probe", "question": fact.question,
                      "audience": "public", "history": [], "expected": [_locator(fact)],
                      "must_not_contain": [fact.literal]})
    if other is not None:
        for n, fact in enumerate(public[:3], start=1):
            cases.append({"id": f"{spec.slug}-t{n:03d}", "type": "tenant_probe", "question": fact.question,
                          "tenant": other.slug, "history": [], "expected": [_locator(fact)]})
    for n, text in enumerate(GREETINGS, start=1):
        cases.append({"id": f"{spec.slug}-g{n:03d}", "type": "greeting", "question": text, "history": [],
                      "expected": []})
    return {"tenant": spec.slug, "audience": "public", "cases": cases}


def derive_for(slug: str) -> dict[str, Any]:
    specs = {s.slug: s for s in all_tenants()}
    if slug not in specs:
        raise ValueError(f"no demo specification for tenant {slug!r} (known: {', '.join(sorted(specs))})")
    other = next((s for s in specs.values() if s.slug != slug), None)
    return derive_cases(specs[slug], other=other)
