"""`manage.py distribute` (--plan, --apply) and migrate's Citus check (docs/decisions/0122).

No Citus runs here: --plan is read from the migrated catalog, --apply is refused on this plain
PostgreSQL, and the apply loop runs against a stand-in cursor that plays a coordinator (it
records the statements and answers the catalog questions), which is how resuming is shown.
"""

from __future__ import annotations

import re
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connections

from tenants.distribution import distribution_plan, kind_of, read_schema
from tenants.management.commands import distribute
from tenants.management.commands.migrate import citus_check


def _plan() -> list[str]:
    out = StringIO()
    call_command("distribute", "--plan", stdout=out)
    return out.getvalue().splitlines()


@pytest.mark.django_db(databases=["default", "owner"])
def test_the_plan_places_every_table_and_orders_the_phases() -> None:
    lines = _plan()
    statements = [line for line in lines if not line.startswith("--")]
    with connections["owner"].cursor() as cursor:
        schema = read_schema(cursor)
    kinds = {name: kind_of(table) for name, table in schema.tables.items()}
    references = [re.search(r"create_reference_table\('(\w+)'\)", s) for s in statements]
    assert sorted(m.group(1) for m in references if m) == sorted(n for n, k in kinds.items() if k == "reference")
    distributed = [re.search(r"create_distributed_table_concurrently\('(\w+)', '(\w+)'", s) for s in statements]
    placed = {m.group(1): m.group(2) for m in distributed if m}
    assert set(placed) == {n for n, k in kinds.items() if k == "distributed"}
    assert placed["corpus_chunk"] == "tenant_id" and placed["tenants_ratelimit"] == "bucket"
    assert "colocate_with => 'answering_trace'" in next(s for s in statements if "'corpus_chunk'" in s)
    # keys between tenant tables: dropped before any table moves, back NOT VALID after, then validated
    phases = [line.split(":")[0][3:] for line in lines if line.startswith("-- ")]
    assert phases == ["settings", "reference", "drop-key", "distribute", "add-key", "validate-key", "workers"]
    dropped = [s for s in statements if "DROP CONSTRAINT" in s]
    assert any('"corpus_chunk_tenant_id_document_id_fkey"' in s for s in dropped)
    assert len(dropped) == len([s for s in statements if s.endswith("NOT VALID;")]) == \
        len([s for s in statements if "VALIDATE CONSTRAINT" in s])
    assert [s for s in statements if "run_command_on_workers" in s] == [
        "SELECT * FROM run_command_on_workers('ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF');",
        "SELECT * FROM run_command_on_workers('ALTER FUNCTION public.similarity_op(text, text) LEAKPROOF');"]


@pytest.mark.django_db(databases=["default", "owner"])
def test_apply_is_refused_on_plain_postgresql_and_changes_nothing() -> None:
    with connections["owner"].cursor() as cursor:
        before = read_schema(cursor).foreign_keys
    with pytest.raises(CommandError) as refused:
        call_command("distribute", "--apply")
    assert "plain PostgreSQL" in str(refused.value) and "Citus coordinator" in str(refused.value)
    with connections["owner"].cursor() as cursor:
        assert read_schema(cursor).foreign_keys == before


@pytest.mark.django_db(databases=["default", "owner"])
def test_forced_fail_a_schema_citus_would_refuse_is_not_planned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distribute, "violations", lambda schema: ["h50_planted: unique h50_pkey ['id'] lacks tenant_id"])
    with pytest.raises(CommandError, match="h50_planted"):
        call_command("distribute", "--plan")


class Coordinator:
    """A stand-in Citus coordinator: answers the catalog reads of apply_plan, records the rest."""

    def __init__(self, *, keys: set[tuple[str, str]], leakproof: str = "t") -> None:
        self.placed: set[str] = set()
        self.keys = set(keys)
        self.sent: list[str] = []
        self.leakproof = leakproof
        self.rows: list[Any] = []

    def execute(self, statement: str, params: dict[str, Any] | None = None) -> None:
        if statement == distribute._CITUS:
            self.rows = [("13.0",)]
        elif statement == distribute._WORKERS:
            self.rows = [(2,)]
        elif statement == distribute._PLACED:
            self.rows = [(n,) for n in self.placed]
        elif statement == distribute._CONSTRAINT:
            self.rows = [(1,)] if params and (params["table"], params["name"]) in self.keys else []
        elif statement == distribute._LEAKPROOF_ON_WORKERS:
            self.rows = [("worker-1", 5432, True, self.leakproof), ("worker-2", 5432, True, self.leakproof)]
        else:
            self.sent.append(statement)
            if m := re.search(r"create_(?:reference|distributed)_table(?:_concurrently)?\('(\w+)'", statement):
                self.placed.add(m.group(1))
            if m := re.search(r'ALTER TABLE "(\w+)" (DROP|ADD) CONSTRAINT "(\w+)"', statement):
                (self.keys.discard if m.group(2) == "DROP" else self.keys.add)((m.group(1), m.group(3)))
            self.rows = [("worker-1", 5432, True, "ALTER FUNCTION")] if "run_command_on_workers" in statement else []

    def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[Any]:
        return self.rows


@pytest.mark.django_db(databases=["default", "owner"])
def test_apply_runs_the_plan_once_and_a_second_run_resumes_with_nothing_to_do() -> None:
    with connections["owner"].cursor() as cursor:
        schema = read_schema(cursor)
    steps = distribution_plan(schema)
    keys = {(k.table, k.name) for k in schema.foreign_keys}
    coordinator = Coordinator(keys=keys)
    said: list[str] = []
    distribute.apply_plan(cursor=coordinator, steps=steps, write=said.append)
    assert coordinator.sent == [s.sql for s in steps]
    assert coordinator.keys == keys  # every dropped key is back
    assert said[-1].startswith("distributed: ")
    again = Coordinator(keys=keys)
    again.placed = set(coordinator.placed)
    distribute.apply_plan(cursor=again, steps=steps, write=said.append)
    assert all(s.phase in ("settings", "validate-key", "workers") for s in steps if s.sql in again.sent)


@pytest.mark.django_db(databases=["default", "owner"])
def test_forced_fail_a_worker_without_leakproof_operators_fails_the_apply() -> None:
    with connections["owner"].cursor() as cursor:
        schema = read_schema(cursor)
    coordinator = Coordinator(keys={(k.table, k.name) for k in schema.foreign_keys}, leakproof="f")
    with pytest.raises(CommandError, match="not LEAKPROOF"):
        distribute.apply_plan(cursor=coordinator, steps=distribution_plan(schema), write=lambda _: None)


# --- migrate refuses a schema Citus could not distribute -----------------------------------------
@pytest.mark.django_db(databases=["default", "owner"])
def test_the_migrated_schema_passes_migrates_citus_check() -> None:
    assert citus_check(using="owner") == ""


@pytest.mark.django_db(databases=["default", "owner"])
def test_forced_fail_a_new_tenant_table_without_tenant_id_in_its_key_is_refused() -> None:
    with connections["owner"].cursor() as cursor:  # inside the test's transaction, rolled back with it
        cursor.execute("CREATE TABLE h50_planted (id bigserial PRIMARY KEY, tenant_id bigint NOT NULL)")
    with pytest.raises(CommandError) as refused:
        citus_check(using="owner")
    assert "h50_planted: unique h50_planted_pkey ['id'] lacks tenant_id" in str(refused.value)
