"""The demo corpus: deterministic, complete, and shaped the way the ingest pipeline and the
golden-set deriver expect. No database: everything here is files and declarations."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command

from corpus.demo import phrasebook
from corpus.demo.generate import (
    DEFAULT_OUTPUT,
    MANIFEST_NAME,
    check_facts,
    generate,
    heading_count,
    markdown_sections,
    word_count,
)
from corpus.demo.spec import TenantSpec, all_tenants, validate

TENANTS = all_tenants()
FRONT_MATTER_KEYS = {"title", "version", "effective_date", "audience", "supersedes"}


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _front_matter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    data = yaml.safe_load(text[4 : text.index("\n---\n", 4)])
    assert isinstance(data, dict)
    return data


def _tenant_text(tenant: TenantSpec, root: Path = DEFAULT_OUTPUT) -> dict[str, str]:
    return {name: data.decode() for name, data in _tree(root / tenant.slug).items()}


def _phrases() -> list[str]:
    flat = [*phrasebook.DOC_INTRO, *phrasebook.DOC_INTRO_SECOND, *phrasebook.CHANGELOG_INTRO]
    flat += [*phrasebook.CHANGELOG_OUTRO, *phrasebook.TICKET_OPENER, *phrasebook.TICKET_CLOSER]
    for family in (phrasebook.OPENERS, phrasebook.MIDDLES, phrasebook.CLOSERS):
        flat += [phrase for options in family.values() for phrase in options]
    return flat


@pytest.mark.parametrize("tenant", TENANTS, ids=lambda t: t.slug)
def test_spec_declarations_are_sound(tenant: TenantSpec) -> None:
    assert validate(tenant) == []


def test_generation_is_deterministic(tmp_path: Path) -> None:
    generate(tmp_path / "a")
    generate(tmp_path / "b")
    first, second = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert first and first == second


def test_committed_output_is_current(tmp_path: Path) -> None:
    generate(tmp_path)
    assert _tree(tmp_path) == _tree(DEFAULT_OUTPUT), "run: python manage.py generate_demo"


def test_every_declared_fact_appears_under_its_heading(tmp_path: Path) -> None:
    assert check_facts(DEFAULT_OUTPUT) == []
    assert generate(tmp_path).warnings == ()


def test_forced_fail_corrupted_facts_are_reported(tmp_path: Path) -> None:
    copy = tmp_path / "output"
    shutil.copytree(DEFAULT_OUTPUT, copy)
    pricing = copy / "paylane" / "docs" / "billing" / "pricing.md"
    pricing.write_text(pricing.read_text().replace("$35/month", "$36/month"))
    changelog_path = copy / "paylane" / "changelog.json"
    changelog_path.write_text(changelog_path.read_text().replace("8 retries", "9 retries"))
    tickets_path = copy / "helpwise" / "tickets.json"
    tickets_path.write_text(tickets_path.read_text().replace("DMARC record", "DMARC entry"))
    # A fact moved to another section is as wrong for a heading locator as a missing one.
    webhooks = copy / "helpwise" / "docs" / "guides" / "webhooks.md"
    moved = webhooks.read_text().replace("X-Helpwise-Signature", "signature")
    webhooks.write_text(moved.replace("# Webhooks\n", "# Webhooks\n\nSigned with X-Helpwise-Signature.\n"))

    warnings = check_facts(copy)

    assert len(warnings) == 4, warnings
    assert any("billing/pricing" in w and "'$35/month' is missing" in w for w in warnings)
    assert any("CL-2025-06" in w and "'8 retries' is missing" in w for w in warnings)
    assert any("T-20417" in w and "'DMARC record' is missing" in w for w in warnings)
    assert any("guides/webhooks" in w and "not under heading 'Verifying requests'" in w for w in warnings)


@pytest.mark.parametrize("tenant", TENANTS, ids=lambda t: t.slug)
def test_each_tenant_has_enough_documents(tenant: TenantSpec) -> None:
    assert tenant.document_count >= 40
    assert len(tenant.docs) >= 28 and len(tenant.changelog) >= 8 and len(tenant.tickets) >= 8
    docs = list((DEFAULT_OUTPUT / tenant.slug / "docs").rglob("*.md"))
    changelog = json.loads((DEFAULT_OUTPUT / tenant.slug / "changelog.json").read_text())
    tickets = json.loads((DEFAULT_OUTPUT / tenant.slug / "tickets.json").read_text())
    assert len(docs) + len(changelog) + len(tickets) == tenant.document_count
    assert any("/" in doc.slug for doc in tenant.docs)


@pytest.mark.parametrize("tenant", TENANTS, ids=lambda t: t.slug)
def test_docs_follow_the_markdown_format(tenant: TenantSpec) -> None:
    for doc in tenant.docs:
        path = DEFAULT_OUTPUT / tenant.slug / "docs" / f"{doc.slug}.md"
        meta = _front_matter(path)
        assert set(meta) <= FRONT_MATTER_KEYS and meta["title"] == doc.title
        assert meta["audience"] in ("public", "customer", "internal")
        text = path.read_text()
        h1 = [line for line in text.splitlines() if line.startswith("# ")]
        assert h1 == [f"# {doc.title}"], doc.slug
        assert 300 <= word_count(text) <= 1200, (doc.slug, word_count(text))
        assert 3 <= heading_count(text) <= 6, doc.slug


@pytest.mark.parametrize("tenant", TENANTS, ids=lambda t: t.slug)
def test_entries_follow_the_json_format(tenant: TenantSpec) -> None:
    changelog = json.loads((DEFAULT_OUTPUT / tenant.slug / "changelog.json").read_text())
    tickets = json.loads((DEFAULT_OUTPUT / tenant.slug / "tickets.json").read_text())
    for entry in changelog:
        assert list(entry) == ["id", "title", "date", "version", "audience", "body"]
        assert re.fullmatch(r"CL-\d{4}-\d{2}", entry["id"]) and re.fullmatch(r"v\d+\.\d+\.\d+", entry["version"])
        assert "### " in entry["body"]
    for ticket in tickets:
        assert list(ticket) == ["id", "subject", "question", "resolution", "resolved_at", "audience"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", ticket["resolved_at"])


@pytest.mark.parametrize("tenant", TENANTS, ids=lambda t: t.slug)
def test_declared_supersession_is_written_and_stale_question_is_sound(tenant: TenantSpec) -> None:
    superseding = [doc for doc in tenant.docs if doc.supersedes]
    assert superseding
    for doc in superseding:
        meta = _front_matter(DEFAULT_OUTPUT / tenant.slug / "docs" / f"{doc.slug}.md")
        assert meta["supersedes"] == doc.supersedes
        assert (DEFAULT_OUTPUT / tenant.slug / "docs" / f"{doc.supersedes}.md").is_file()  # both stay live
        assert str(meta["effective_date"]) > str(_front_matter(
            DEFAULT_OUTPUT / tenant.slug / "docs" / f"{doc.supersedes}.md")["effective_date"])
    files = _tenant_text(tenant)
    assert tenant.stale
    for stale in tenant.stale:
        current = tenant.doc(stale.current.key)
        assert current.supersedes
        sections = markdown_sections(files[f"docs/{current.slug}.md"])
        assert stale.current_literal in sections[stale.heading.lower()]
        holders = [name for name, text in files.items() if stale.outdated_literal in text]
        assert holders == [f"docs/{current.supersedes}.md"]


@pytest.mark.parametrize("tenant", TENANTS, ids=lambda t: t.slug)
def test_unmarked_conflict_is_in_the_manifest_only(tenant: TenantSpec) -> None:
    manifest = yaml.safe_load((DEFAULT_OUTPUT / tenant.slug / MANIFEST_NAME).read_text())
    assert tenant.conflicts
    assert manifest == {
        "conflicts": [
            {"id": c.id, "note": c.note, "match": c.match, "documents": [r.manifest_entry() for r in c.documents]}
            for c in tenant.conflicts
        ]
    }
    changelog = {e["id"]: e for e in json.loads((DEFAULT_OUTPUT / tenant.slug / "changelog.json").read_text())}
    for conflict in tenant.conflicts:
        assert len(conflict.documents) == len(conflict.literals) >= 2 and len(set(conflict.literals)) > 1
        for ref, literal in zip(conflict.documents, conflict.literals, strict=True):
            if ref.source == "doc":
                text = (DEFAULT_OUTPUT / tenant.slug / "docs" / f"{ref.key}.md").read_text()
                assert "supersedes" not in _front_matter(DEFAULT_OUTPUT / tenant.slug / "docs" / f"{ref.key}.md")
            else:
                text = changelog[ref.key]["body"]
            assert literal in text and conflict.match.lower() in text.lower()
            assert tenant.audience_of(ref) == "public"


@pytest.mark.parametrize("tenant", TENANTS, ids=lambda t: t.slug)
def test_audiences(tenant: TenantSpec) -> None:
    audiences = [
        _front_matter(DEFAULT_OUTPUT / tenant.slug / "docs" / f"{doc.slug}.md")["audience"] for doc in tenant.docs
    ]
    assert audiences.count("internal") >= 3
    assert audiences.count("customer") >= 2
    assert audiences.count("public") > len(audiences) // 2
    internal_facts = [f for f in tenant.facts() if f.audience == "internal"]
    assert len({f.key for f in internal_facts if f.source == "doc"}) >= 3


def test_shared_vocabulary_carries_different_facts() -> None:
    paylane, helpwise = TENANTS
    shared = {"guides/webhooks", "api/rate-limits", "api/authentication"}
    for tenant in TENANTS:
        assert shared <= {doc.slug for doc in tenant.docs}
    for mine, theirs in ((paylane, helpwise), (helpwise, paylane)):
        corpus = "\n".join(_tenant_text(theirs).values())
        leaked = [
            f.literal for f in mine.facts()
            if re.search(rf"(?<![A-Za-z0-9]){re.escape(f.literal)}(?![A-Za-z0-9])", corpus)
        ]
        assert leaked == [], f"{mine.slug} facts found in {theirs.slug}'s corpus"


@pytest.mark.parametrize("tenant", TENANTS, ids=lambda t: t.slug)
def test_must_abstain_questions_are_really_unanswerable(tenant: TenantSpec) -> None:
    corpus = "\n".join(_tenant_text(tenant).values()).lower()
    assert len(tenant.abstain) >= 3
    for question in tenant.abstain:
        assert question.absent_terms
        assert [term for term in question.absent_terms if term.lower() in corpus] == [], question.question


def test_phrasebook_cannot_contradict_the_spec() -> None:
    phrases = _phrases()
    assert [p for p in phrases if re.search(r"\d", p)] == []
    terms = {term for tenant in TENANTS for q in tenant.abstain for term in q.absent_terms}
    assert [p for p in phrases for term in terms if term in p.lower()] == []


@pytest.mark.parametrize("tenant", TENANTS, ids=lambda t: t.slug)
def test_fact_records_carry_what_a_golden_deriver_needs(tenant: TenantSpec) -> None:
    records = tenant.facts()
    assert len(records) >= 80
    stale_literals = {s.outdated_literal for s in tenant.stale}
    assert stale_literals <= {r.literal for r in records if r.superseded}
    assert {r.literal for r in records if r.contested} == {x for c in tenant.conflicts for x in c.literals}
    for record in records:
        assert record.tenant == tenant.slug and record.question.endswith("?")
        assert record.literal and record.heading
        locator = record.locator()
        assert locator["source"] == record.source and locator["heading"] == record.heading
        assert locator.get("slug" if record.source == "doc" else "id") == record.key
        # The question should not just quote the sentence that answers it.
        assert record.question.rstrip("?").lower() not in _sentence_of(tenant, record.literal).lower()


def _sentence_of(tenant: TenantSpec, literal: str) -> str:
    for doc in tenant.docs:
        for _, fact in doc.placed_facts():
            if fact.literal == literal:
                return fact.sentence
    for entry in (*tenant.changelog, *tenant.tickets):
        for _, fact in entry.placed_facts():
            if fact.literal == literal:
                return fact.sentence
    raise KeyError(literal)


def test_command_writes_output_and_reports_no_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("generate_demo", output=tmp_path, strict=True)
    out = capsys.readouterr().out
    assert "paylane: " in out and "helpwise: " in out and "Every declared fact appears" in out
    assert _tree(tmp_path) == _tree(DEFAULT_OUTPUT)
