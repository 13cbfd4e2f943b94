"""The demo corpus is data: every declared fact (corpus/demo/facts/<tenant>.yaml) is in its
document under its heading, every case of the demo golden sets stands on declared facts, and the
documents read like a help centre, not like a template. No database: documents are parsed with
the ingest's own parsers."""

from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from corpus.demo.declared import (
    DEMO_DIR, LANGUAGE_TENANTS, TENANTS, fact_problems, read_declared, read_documents, tenant_folder,
)
from corpus.ingest.manifest import load_manifest
from evaluation.derive import golden_problems
from evaluation.golden import load_golden

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "evaluation" / "golden"
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _corpus_text(tenant: str, root: Path = DEMO_DIR) -> str:
    """Everything the tenant's documents say, as one lowercase string (front matter included)."""
    folder = tenant_folder(tenant, root=root)
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.is_file()).lower()


@pytest.mark.parametrize("tenant", TENANTS)
def test_every_declared_fact_is_in_its_document_under_its_heading(tenant: str) -> None:
    assert len(read_declared(tenant).facts) >= 80
    assert fact_problems(tenant) == []


@pytest.mark.parametrize("tenant", TENANTS)
def test_every_demo_golden_case_stands_on_declared_facts(tenant: str) -> None:
    golden = load_golden(GOLDEN_DIR / f"demo-{tenant}.yaml")
    assert golden.tenant == tenant and len(golden.cases) >= 50
    assert golden_problems(golden) == []


def test_forced_fail_a_fact_taken_out_of_its_document_or_section(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(DEMO_DIR, root, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    assert fact_problems("paylane", root=root) == [] and fact_problems("helpwise", root=root) == []
    pricing = root / "paylane" / "docs" / "billing" / "pricing.md"
    pricing.write_text(pricing.read_text().replace("$35/month", "$36/month"))
    changelog = root / "paylane" / "changelog.json"
    changelog.write_text(changelog.read_text().replace("8 retries", "9 retries"))
    tickets = root / "helpwise" / "tickets.json"
    tickets.write_text(tickets.read_text().replace("DMARC record", "DMARC entry"))
    # A fact moved to another section is as wrong for a heading locator as a missing one.
    webhooks = root / "helpwise" / "docs" / "guides" / "webhooks.md"
    moved = webhooks.read_text().replace("X-Helpwise-Signature", "signature")
    webhooks.write_text(moved.replace("# Webhooks\n", "# Webhooks\n\nSigned with X-Helpwise-Signature.\n", 1))

    paylane, helpwise = fact_problems("paylane", root=root), fact_problems("helpwise", root=root)

    assert sorted(paylane) == sorted([
        "paylane: doc:billing/pricing: '$35/month' is missing",  # the stale case's current answer
        "paylane: changelog:CL-2025-06: '8 retries' is missing",
    ])
    assert sorted(helpwise) == sorted([
        "helpwise: ticket:T-20417: 'DMARC record' is missing",
        "helpwise: doc:guides/webhooks: 'X-Helpwise-Signature' is not under heading 'Verifying requests'",
    ])


def test_forced_fail_golden_cases_off_the_facts(tmp_path: Path) -> None:
    data = yaml.safe_load((GOLDEN_DIR / "demo-paylane.yaml").read_text())
    cases = {case["id"]: case for case in data["cases"]}
    cases["paylane-n001"]["must_contain"] = ["a value nobody declared"]
    cases["paylane-n002"]["expected"][0]["heading"] = "A heading no page has"
    cases["paylane-a001"]["question"] = "Can I pay my invoice in person?"
    cases["paylane-s001"]["must_not_contain"] = ["$35/month"]
    cases["paylane-c001"]["expected"] = cases["paylane-c001"]["expected"][:1]
    cases["paylane-p001"]["audience"] = "internal"
    path = tmp_path / "demo-paylane.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))

    problems = golden_problems(load_golden(path))

    flagged = sorted({p.split(":", 1)[0] for p in problems})
    assert flagged == ["paylane-a001", "paylane-c001", "paylane-n001", "paylane-n002", "paylane-p001",
                       "paylane-s001"], problems


@pytest.mark.parametrize("tenant", TENANTS)
def test_the_stale_answer_supersedes_a_document_that_still_says_the_old_one(tenant: str) -> None:
    documents = read_documents(tenant_folder(tenant))
    declared = read_declared(tenant)
    assert declared.stale
    for stale in declared.stale:
        current = documents[("doc", stale.where["slug"])]
        assert current.supersedes, current.slug
        old = documents[("doc", current.supersedes)]  # both stay in the folder; the ingest archives the old
        assert current.effective_date and old.effective_date and current.effective_date > old.effective_date
        holders = [key for key, d in documents.items() if any(stale.outdated in s.text for s in d.sections)]
        assert holders == [("doc", old.slug)]


@pytest.mark.parametrize("tenant", TENANTS)
def test_each_declared_conflict_is_in_the_manifest_with_one_side_per_document(tenant: str) -> None:
    manifest = {c.id: c for c in load_manifest(tenant_folder(tenant))}
    declared = read_declared(tenant)
    documents = read_documents(tenant_folder(tenant))
    assert declared.conflicts and set(declared.conflicts) == set(manifest)
    for conflict_id, conflict in manifest.items():
        sides = {(f.where["source"], f.where.get("slug") or f.where["id"]): f
                 for f in declared.facts if f.contested == conflict_id}
        assert set(sides) == {(d.source_type, d.slug) for d in conflict.documents}
        assert len({f.text for f in sides.values()}) == len(sides) >= 2  # they disagree
        for key, fact in sides.items():
            assert (documents[key].audience or "public") == "public" and documents[key].supersedes is None
            section = [s.text for s in documents[key].sections if fact.text in s.text]
            assert section and conflict.match.lower() in section[0].lower()  # the tagged chunk holds the value


@pytest.mark.parametrize("tenant", TENANTS)
def test_must_abstain_questions_name_what_the_corpus_never_says(tenant: str) -> None:
    corpus = _corpus_text(tenant)
    declared = read_declared(tenant)
    assert len(declared.must_abstain) >= 3
    for item in declared.must_abstain:
        assert item.absent and [t for t in item.absent if t.lower() in corpus] == [], item.question


def test_one_tenants_facts_are_not_in_the_other_tenants_documents() -> None:
    for mine, theirs in (("paylane", "helpwise"), ("helpwise", "paylane")):
        corpus = _corpus_text(theirs)
        leaked = [f.text for f in read_declared(mine).facts
                  if re.search(rf"(?<![a-z0-9]){re.escape(f.text.lower())}(?![a-z0-9])", corpus)]
        assert leaked == [], f"{mine} facts found in {theirs}'s documents"


@pytest.mark.parametrize("tenant", TENANTS)
def test_documents_cover_every_audience_and_source(tenant: str) -> None:
    documents = read_documents(tenant_folder(tenant))
    audiences = [d.audience or "public" for d in documents.values()]
    assert len(documents) >= 40 and {kind for kind, _ in documents} == {"doc", "changelog", "ticket"}
    assert audiences.count("internal") >= 3 and audiences.count("customer") >= 2
    assert audiences.count("public") > len(audiences) // 2
    entries = json.loads((tenant_folder(tenant) / "tickets.json").read_text())
    assert all(list(e) == ["id", "subject", "question", "resolution", "resolved_at", "audience"] for e in entries)


def test_no_sentence_is_padding_repeated_across_the_demo() -> None:
    """A help centre says each thing once, where it applies: a sentence of six words or more
    that appears in two places of the demo is filler (or a copy that will drift)."""
    places: dict[str, set[str]] = defaultdict(set)
    for tenant in TENANTS:
        for key, document in read_documents(tenant_folder(tenant)).items():
            for section in document.sections:
                for sentence in SENTENCE.split(re.sub(r"\s+", " ", section.text)):
                    if len(sentence.split()) >= 6:
                        places[sentence.strip()].add(f"{tenant}:{':'.join(key)}#{section.heading_path[-1]}")
    repeated = {sentence: sorted(where) for sentence, where in places.items() if len(where) > 1}
    assert repeated == {}, f"{len(repeated)} repeated sentences, e.g. {next(iter(repeated.items()), None)}"


@pytest.mark.parametrize("tenant", LANGUAGE_TENANTS)
def test_a_language_demo_tenant_stands_on_its_facts(tenant: str) -> None:
    """The Czech help centre (docs/decisions/0050): about twenty pages, public and internal, every
    fact in place, at least 30 golden cases on them, and abstentions the corpus cannot answer."""
    documents = read_documents(tenant_folder(tenant))
    audiences = [d.audience or "public" for d in documents.values()]
    assert len(documents) >= 20 and audiences.count("internal") >= 3
    assert fact_problems(tenant) == []
    golden = load_golden(GOLDEN_DIR / f"demo-{tenant}.yaml")
    assert golden.tenant == tenant and len(golden.cases) >= 30 and golden_problems(golden) == []
    assert {case.type for case in golden.cases} >= {"normal", "must_abstain", "audience_probe"}
    corpus = _corpus_text(tenant)
    for item in read_declared(tenant).must_abstain:
        assert item.absent and [t for t in item.absent if t.lower() in corpus] == [], item.question
