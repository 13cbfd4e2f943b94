"""Tenant and audience isolation, proven against the real PostgreSQL.

Layers under test: the scope on its own (row-level security bypassed by a superuser
connection), row-level security on its own (the scope bypassed by raw SQL as the app role),
and forced-fail proofs that each check goes red when its layer is broken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connections
from psycopg import sql

from conftest import Cast, _make_cast
from tenants.scope import ChunkQuery, ScopeViolation, TenantScope
from tenants.tests.planting import plant, unit_vector

SENTINEL_OTHER_TENANT = "zebracorn globex-secret-7781"
SENTINEL_INTERNAL = "zebracorn acme-internal-4412"
SENTINEL_ARCHIVED = "zebracorn acme-archived-9090"
PUBLIC_TEXT = "zebracorn acme-public-1001"


@dataclass
class World:
    acme: Cast
    globex: Cast


@pytest.fixture(scope="module")
def world(django_db_setup: Any, django_db_blocker: Any) -> World:
    """Committed rows (readers on other connections must see them): acme public, internal
    and archived chunks, and a globex public chunk; every one findable by the same word."""
    with django_db_blocker.unblock():
        acme, globex = _make_cast("iso-acme"), _make_cast("iso-globex")
        plant(tenant_id=acme.tenant.id, audience_id=acme.public_id, slug="iso/public", content=PUBLIC_TEXT)
        plant(tenant_id=acme.tenant.id, audience_id=acme.internal_id, slug="iso/internal", content=SENTINEL_INTERNAL)
        plant(
            tenant_id=acme.tenant.id, audience_id=acme.public_id, slug="iso/archived",
            content=SENTINEL_ARCHIVED, archived=True,
        )
        plant(tenant_id=globex.tenant.id, audience_id=globex.public_id, slug="iso/globex", content=SENTINEL_OTHER_TENANT)
    return World(acme, globex)


def _reads(scope: TenantScope) -> list[str]:
    """Every shape of chunk read the product makes: all rows, keyword match, nearest vectors."""
    contents: list[str] = []
    queries = [
        ChunkQuery(select=sql.SQL("c.content")),
        ChunkQuery(
            select=sql.SQL("c.content"),
            where=sql.SQL("c.tsv @@ plainto_tsquery('english', %(q)s)"),
            params={"q": "zebracorn"},
        ),
    ]
    for slug in ("iso/globex", "iso/internal", "iso/archived", "iso/public"):
        queries.append(
            ChunkQuery(
                select=sql.SQL("c.content"),
                order_by=sql.SQL("c.embedding <=> %(v)s::vector"),
                limit=5,
                params={"v": "[" + ",".join(map(str, unit_vector(slug))) + "]"},
                local_settings={"hnsw.iterative_scan": "relaxed_order"},
            )
        )
    for query in queries:
        contents.extend(row["content"] for row in scope.fetch(query))
    return contents


FORBIDDEN_KEYS = {"=globex-secret-7781": SENTINEL_OTHER_TENANT, "=acme-internal-4412": SENTINEL_INTERNAL,
                  "=acme-archived-9090": SENTINEL_ARCHIVED}


def _derived_reads(scope: TenantScope) -> list[str]:
    """Word statistics and vocabulary, mapped back to the sentinel they would betray."""
    seen = [FORBIDDEN_KEYS.get(term, term) for term, df in scope.document_frequencies(list(FORBIDDEN_KEYS)).items() if df]
    for key in FORBIDDEN_KEYS:
        near_miss = key[:-1] + "0"  # one character off: what typo correction would look up
        seen += [FORBIDDEN_KEYS.get(term, term) for term, _, _ in scope.similar_terms(near_miss, threshold=0.3)]
    return seen


def find_leaks(make_scope: Callable[[], TenantScope]) -> list[str]:
    """The isolation check: what a public reader of iso-acme must never see."""
    try:
        contents = _reads(make_scope()) + _derived_reads(make_scope())
    except ScopeViolation as exc:
        return [f"tripwire: {exc}"]
    forbidden = (SENTINEL_OTHER_TENANT, SENTINEL_INTERNAL, SENTINEL_ARCHIVED)
    return sorted({text for text in contents if text in forbidden})


def public_reader(world: World, using: str, cls: type[TenantScope] = TenantScope) -> Callable[[], TenantScope]:
    return lambda: cls(tenant_id=world.acme.tenant.id, audience_ids=(world.acme.public_id,), using=using)


class PredicateDropped(TenantScope):
    """A deliberately broken scope: the weld is gone."""

    def _predicate(self) -> sql.Composable:
        return sql.SQL("TRUE")


class PredicateAndTripwireDropped(PredicateDropped):
    def _tripwire(self, rows: Any) -> None:
        return None


ALL_DBS = ["default", "rls_bypass"]


@pytest.mark.django_db(databases=ALL_DBS)
def test_scope_alone_isolates_with_rls_bypassed(world: World) -> None:
    assert find_leaks(public_reader(world, "rls_bypass")) == []


@pytest.mark.django_db(databases=ALL_DBS)
def test_scope_isolates_as_app_role(world: World) -> None:
    assert find_leaks(public_reader(world, "default")) == []


@pytest.mark.django_db(databases=ALL_DBS)
def test_control_sentinels_are_findable_where_allowed(world: World) -> None:
    """Without this control, an empty result would pass every isolation test above."""
    globex_reader = TenantScope(tenant_id=world.globex.tenant.id, audience_ids=(world.globex.public_id,))
    assert SENTINEL_OTHER_TENANT in _reads(globex_reader)
    assert SENTINEL_OTHER_TENANT in _derived_reads(globex_reader)
    staff_reader = TenantScope(
        tenant_id=world.acme.tenant.id, audience_ids=(world.acme.public_id, world.acme.internal_id)
    )
    seen = _reads(staff_reader)
    assert SENTINEL_INTERNAL in seen and PUBLIC_TEXT in seen
    assert SENTINEL_INTERNAL in _derived_reads(staff_reader)
    assert SENTINEL_ARCHIVED not in _derived_reads(staff_reader)  # statistics count live chunks only
    assert SENTINEL_ARCHIVED not in seen
    archive_reader = TenantScope(
        tenant_id=world.acme.tenant.id, audience_ids=(world.acme.public_id,), include_archived=True
    )
    assert SENTINEL_ARCHIVED in _reads(archive_reader)


@pytest.mark.django_db(databases=ALL_DBS)
@pytest.mark.planted_sql
def test_forced_fail_dropped_predicate_trips_the_check(world: World) -> None:
    leaks = find_leaks(public_reader(world, "rls_bypass", PredicateDropped))
    assert leaks and leaks[0].startswith("tripwire:"), leaks


@pytest.mark.django_db(databases=ALL_DBS)
@pytest.mark.planted_sql
def test_forced_fail_without_tripwire_the_content_check_goes_red(world: World) -> None:
    leaks = find_leaks(public_reader(world, "rls_bypass", PredicateAndTripwireDropped))
    assert set(leaks) == {SENTINEL_OTHER_TENANT, SENTINEL_INTERNAL, SENTINEL_ARCHIVED}


@pytest.mark.django_db(databases=ALL_DBS)
@pytest.mark.planted_sql
def test_rls_catches_a_broken_scope_as_app_role(world: World) -> None:
    """Defence in depth: with the weld dropped, the database still refuses other tenants' rows."""
    leaks = find_leaks(public_reader(world, "default", PredicateAndTripwireDropped))
    # Archival is the scope's rule, not RLS's: only the archived sentinel may show here.
    assert set(leaks) <= {SENTINEL_ARCHIVED}


# --- RLS alone: raw SQL as the application role, no scope at all -------------------------
def _raw_connection(role: str) -> psycopg.Connection[Any]:
    cfg = settings.DATABASES["default"]
    return psycopg.connect(host=cfg["HOST"], dbname=cfg["NAME"], user=role, port=cfg.get("PORT") or None)


def rls_visible(conn: psycopg.Connection[Any], tenant_id: int | None, audience_ids: list[int]) -> set[str]:
    with conn.transaction():
        if tenant_id is not None:
            conn.execute(
                "SELECT set_config('app.tenant_id', %s, true), set_config('app.audience_ids', %s, true)",
                (str(tenant_id), ",".join(map(str, audience_ids))),
            )
        rows = conn.execute("SELECT content FROM corpus_chunk WHERE content LIKE 'zebracorn%%'").fetchall()
    return {r[0] for r in rows}


@pytest.mark.django_db(databases=ALL_DBS)
def test_rls_alone_hides_other_tenants_and_audiences(world: World) -> None:
    with _raw_connection(settings.DATABASES["default"]["USER"]) as conn:
        seen = rls_visible(conn, world.acme.tenant.id, [world.acme.public_id])
        assert SENTINEL_OTHER_TENANT not in seen and SENTINEL_INTERNAL not in seen
        assert PUBLIC_TEXT in seen  # control
        assert rls_visible(conn, None, []) == set(), "no tenant set must mean no rows"
        # An audience id of another tenant does not open that tenant's rows.
        assert SENTINEL_OTHER_TENANT not in rls_visible(conn, world.acme.tenant.id, [world.globex.public_id])


@pytest.mark.django_db(databases=ALL_DBS)
def test_rls_blocks_the_owner_too_because_it_is_forced(world: World) -> None:
    with _raw_connection(settings.DATABASES["owner"]["USER"]) as conn:
        assert rls_visible(conn, None, []) == set()


@pytest.mark.django_db(databases=ALL_DBS)
def test_forced_fail_rls_check_goes_red_for_a_role_that_bypasses_it(world: World) -> None:
    with _raw_connection("postgres") as conn:
        seen = rls_visible(conn, world.acme.tenant.id, [world.acme.public_id])
    assert SENTINEL_OTHER_TENANT in seen and SENTINEL_INTERNAL in seen


@pytest.mark.django_db(databases=ALL_DBS)
def test_app_role_cannot_write_into_another_tenant(world: World) -> None:
    from tenants.writer import ChunkRow, ChunkWriter

    writer = ChunkWriter(tenant_id=world.acme.tenant.id)
    with pytest.raises(Exception, match="row-level security|violates"):
        with writer.rls_context() as cursor:
            writer.insert(cursor, [ChunkRow(
                document_id=1, audience_id=world.globex.public_id, ordinal=99, heading_path="x",
                content="x", token_count=1, embedding=unit_vector("x"),
            )])


@pytest.mark.django_db(databases=ALL_DBS)
def test_app_role_is_neither_superuser_nor_owner() -> None:
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT r.rolsuper, r.rolbypassrls, t.tableowner = current_user"
            " FROM pg_roles r, pg_tables t WHERE r.rolname = current_user AND t.tablename = 'corpus_chunk'"
        )
        assert cursor.fetchone() == (False, False, False)
        cursor.execute("SELECT relforcerowsecurity FROM pg_class WHERE relname = 'corpus_chunk'")
        assert cursor.fetchone() == (True,)


# --- the staff setting on a pooled connection (issue 15 item 8, docs/decisions/0035) ----------

STAFF_SETTING = "SELECT coalesce(current_setting('app.staff_tenant_ids', true), '')"


@pytest.fixture
def committed_cast(django_db_setup: Any, django_db_blocker: Any) -> Cast:
    """Committed and idempotent, not the module's `world`: pytest-django runs these unmarked
    tests after the marked ones, and `world` would be planted a second time."""
    with django_db_blocker.unblock():
        return _make_cast("iso-staff")


@contextmanager
def pooled_neighbour(alias: str = "default") -> Iterator[list[str]]:
    """What another client would find on this server connection under pgbouncer in
    transaction mode, which may hand it over whenever it is not inside a transaction: after
    every statement run outside one, and once more at the end, read the staff setting."""
    connection = connections[alias]
    seen: list[str] = []

    def peek() -> None:
        with connection.connection.cursor() as raw:
            raw.execute(STAFF_SETTING)
            seen.append(raw.fetchone()[0])

    def between_transactions(execute: Any, statement: str, params: Any, many: bool, context: Any) -> Any:
        try:
            return execute(statement, params, many, context)
        finally:
            if not connection.in_atomic_block and connection.connection is not None:
                peek()

    with connection.execute_wrapper(between_transactions):
        yield seen
    connection.ensure_connection()
    peek()


def test_a_staff_request_leaves_no_staff_setting_for_the_next_client(committed_cast: Cast,
                                                                     django_db_blocker: Any) -> None:
    """Committed, outside any test transaction, as in production: the setting must exist
    only inside the request's transaction. Red on the session-level set_config of before."""
    from django.contrib.auth.models import Permission
    from django.test import Client

    with django_db_blocker.unblock():
        committed_cast.owner.user_permissions.add(*Permission.objects.filter(codename="view_document"))
        client = Client()
        client.force_login(committed_cast.owner)
        with pooled_neighbour() as seen:
            response = client.get("/admin/corpus/document/")
        assert response.status_code == 200
        assert seen and set(seen) == {""}, seen


def test_the_staff_setting_admits_inside_its_transaction_and_is_gone_after(committed_cast: Cast,
                                                                          django_db_blocker: Any) -> None:
    from tenants.rls import staff_tenant_context

    with django_db_blocker.unblock():
        with pooled_neighbour() as seen:
            with staff_tenant_context([committed_cast.tenant.id]), connections["default"].cursor() as cursor:
                cursor.execute(STAFF_SETTING)
                inside = cursor.fetchone()[0]
    assert inside == str(committed_cast.tenant.id)
    assert set(seen) == {""}, seen


def test_forced_fail_a_session_level_staff_setting_is_seen_by_the_next_client(committed_cast: Cast,
                                                                              django_db_blocker: Any) -> None:
    """The detector above goes red for the old way of setting it (set_config(..., false))."""
    with django_db_blocker.unblock():
        with pooled_neighbour() as seen:
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT set_config('app.staff_tenant_ids', %s, false)", [str(committed_cast.tenant.id)])
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT set_config('app.staff_tenant_ids', '', false)")
    assert str(committed_cast.tenant.id) in seen
