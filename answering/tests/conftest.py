from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from answering.models import Escalation, Trace
from tenants.models import Tenant
from tenants.rls import tenant_context


@pytest.fixture
def paylane(demo_corpus: Any, db: Any) -> Tenant:
    return Tenant.objects.get(slug="paylane")


def rows_for(tenant: Tenant, trace_id: int | None) -> tuple[list[Trace], list[Escalation]]:
    assert trace_id is not None
    with tenant_context(tenant.id):
        return list(Trace.objects.filter(pk=trace_id)), list(Escalation.objects.filter(trace_id=trace_id))


@pytest.fixture
def provider_keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    monkeypatch.setenv("FAKE_GEMINI_KEY", "gm-test")
    yield
