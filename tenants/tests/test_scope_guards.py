from __future__ import annotations

import pytest
from psycopg import sql

from tenants.scope import ChunkQuery, FragmentRejected, TenantScope


@pytest.mark.parametrize(
    "where",
    [
        "c.tenant_id = 2",
        "c.audience_id IN (1, 2)",
        "NOT c.archived OR true",
        "current_setting('app.tenant_id') = '1'",
        "true; DELETE FROM corpus_document",
        "true -- comment out the rest",
        "c.id IN (SELECT id FROM corpus_chunk)",
        "true /* hide */",
        "c.id = 1 UNION SELECT 1",
    ],
)
def test_fragments_that_touch_tenancy_are_refused(where: str) -> None:
    with pytest.raises(FragmentRejected):
        ChunkQuery(select=sql.SQL("c.id"), where=sql.SQL(where))


def test_reserved_parameters_and_settings_are_refused() -> None:
    with pytest.raises(FragmentRejected):
        ChunkQuery(select=sql.SQL("c.id"), params={"_scope_tenant": 2})
    with pytest.raises(FragmentRejected):
        ChunkQuery(select=sql.SQL("c.id"), local_settings={"row_security": "off"})
    with pytest.raises(FragmentRejected):
        ChunkQuery(select=sql.SQL("c.id"), limit=0)


def test_plain_strings_are_refused() -> None:
    with pytest.raises(FragmentRejected):
        ChunkQuery(select="c.id")  # type: ignore[arg-type]  # the wrong type on purpose: refused at run time


def test_composed_statement_always_carries_the_weld() -> None:
    scope = TenantScope(tenant_id=7, audience_ids=(1, 2))
    text = scope.compose(ChunkQuery(select=sql.SQL("c.id"), where=sql.SQL("c.ordinal = 0"))).as_string(None)
    assert "c.tenant_id = %(_scope_tenant)s AND c.audience_id = ANY(%(_scope_audiences)s) AND NOT c.archived" in text
    assert text.index("_scope_tenant") < text.index("c.ordinal = 0")


def test_scope_rejects_a_bad_tenant() -> None:
    with pytest.raises(ValueError):
        TenantScope(tenant_id=0, audience_ids=(1,))
