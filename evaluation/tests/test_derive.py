"""Deriving a demo golden set from the declared facts (corpus/demo/facts/) gives cases that stand
on those facts, of every case type, and no plain case from a fact with no single right answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from corpus.demo.declared import TENANTS, document_key, read_declared, read_documents, tenant_folder
from evaluation.derive import derive_cases, golden_problems
from evaluation.golden import CASE_TYPES, load_golden


@pytest.mark.parametrize("tenant", TENANTS)
def test_a_derived_set_has_every_case_type_and_stands_on_the_facts(tenant: str, tmp_path: Path) -> None:
    path = tmp_path / f"demo-{tenant}.yaml"
    call_command("derive_golden", tenant=tenant, output=path)
    golden = load_golden(path)
    assert golden.tenant == tenant and {c.type for c in golden.cases} == set(CASE_TYPES)
    assert len([c for c in golden.cases if c.type == "normal"]) == 40
    assert golden_problems(golden) == []


@pytest.mark.parametrize("tenant", TENANTS)
def test_normal_cases_leave_out_contested_superseded_and_unreadable_facts(tenant: str) -> None:
    declared = read_declared(tenant)
    documents = read_documents(tenant_folder(tenant))
    derived = derive_cases(declared, documents, max_normal=len(declared.facts))
    asked = {term for case in derived["cases"] if case["type"] == "normal" for term in case["must_contain"]}
    contested = {f.text for f in declared.facts if f.contested}
    outdated = {s.outdated for s in declared.stale}
    unreadable = {f.text for f in declared.facts if documents[document_key(f.where)].audience not in (None, "public")}
    assert contested and outdated and unreadable
    assert len(asked) > 60 and not asked & (contested | outdated | unreadable)


def test_a_tenant_without_declared_facts_is_refused() -> None:
    with pytest.raises(CommandError, match="no declared facts for tenant 'acme'"):
        call_command("derive_golden", tenant="acme", output=Path("/nonexistent/never-written.yaml"))
