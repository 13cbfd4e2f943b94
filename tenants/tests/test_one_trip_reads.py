"""A scoped read outside a transaction: its settings and its statement in one round trip
(docs/decisions/0131), proven on committed rows, as the answer path runs in production.

Each test runs outside any test transaction (django_db_blocker.unblock()), where the read
takes the one-trip path; inside one it is a savepoint (test_isolation covers that path).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext
from psycopg import sql

from conftest import _make_cast
from tenants.scope import ChunkQuery, TenantScope
from tenants.tests.test_isolation import World
from tenants.tests.planting import plant, unit_vector

PUBLIC_TEXT = "quokkaroo public-5521"
INTERNAL_TEXT = "quokkaroo internal-5522"
OTHER_TENANT_TEXT = "quokkaroo other-5523"

SETTINGS_NOW = ("SELECT coalesce(current_setting('app.tenant_id', true), ''),"
                " coalesce(current_setting('app.audience_ids', true), ''), current_setting('hnsw.ef_search')")


@pytest.fixture(scope="module")
def pair(django_db_setup: Any, django_db_blocker: Any) -> World:
    """Committed rows, each findable by the same word; fresh tenants, so the module can run twice."""
    suffix = uuid.uuid4().hex[:6]
    with django_db_blocker.unblock():
        acme, globex = _make_cast(f"trip-acme-{suffix}"), _make_cast(f"trip-globex-{suffix}")
        plant(tenant_id=acme.tenant.id, audience_id=acme.public_id, slug="trip/public", content=PUBLIC_TEXT)
        plant(tenant_id=acme.tenant.id, audience_id=acme.internal_id, slug="trip/internal", content=INTERNAL_TEXT)
        plant(tenant_id=globex.tenant.id, audience_id=globex.public_id, slug="trip/other", content=OTHER_TENANT_TEXT)
    return World(acme, globex)


def _public_reader(pair: World, cls: type[TenantScope] = TenantScope) -> TenantScope:
    return cls(tenant_id=pair.acme.tenant.id, audience_ids=(pair.acme.public_id,))


WORD_QUERY = ChunkQuery(select=sql.SQL("c.content"), where=sql.SQL("c.tsv @@ plainto_tsquery('english', %(q)s)"),
                        params={"q": "quokkaroo"})


def _settings_now() -> tuple[str, str, str]:
    with connections["default"].cursor() as cursor:
        cursor.execute(SETTINGS_NOW)
        return cursor.fetchone()


class WeldDropped(TenantScope):
    """The scope's own two layers gone: only row-level security stands between the reader
    and the other rows."""

    def _predicate(self) -> sql.Composable:
        return sql.SQL("TRUE")

    def _tripwire(self, rows: Any) -> None:
        return None


def test_a_read_outside_a_transaction_is_one_statement_and_sees_its_scope_only(pair: World,
                                                                               django_db_blocker: Any) -> None:
    with django_db_blocker.unblock():
        assert not connections["default"].in_atomic_block
        with CaptureQueriesContext(connections["default"]) as sent:
            rows = _public_reader(pair).fetch(WORD_QUERY)
    assert [row["content"] for row in rows] == [PUBLIC_TEXT]
    assert len(sent.captured_queries) == 1, [q["sql"][:80] for q in sent.captured_queries]
    assert sent.captured_queries[0]["sql"].startswith('SET LOCAL "app"."tenant_id"')


@pytest.mark.planted_sql
def test_row_level_security_holds_on_the_one_trip_path_with_the_weld_gone(pair: World, django_db_blocker: Any) -> None:
    """The settings travel with the statement: the policies admit the scope's rows and no
    others even when the scope itself welds nothing."""
    with django_db_blocker.unblock():
        contents = [row["content"] for row in _public_reader(pair, WeldDropped).fetch(WORD_QUERY)]
        vector_contents = [row["content"] for row in _public_reader(pair, WeldDropped).fetch(ChunkQuery(
            select=sql.SQL("c.content"), order_by=sql.SQL("c.embedding <=> %(v)s::vector"), limit=5,
            params={"v": "[" + ",".join(map(str, unit_vector("trip/other"))) + "]"},
            local_settings={"hnsw.iterative_scan": "relaxed_order"}))]
    assert contents == [PUBLIC_TEXT]
    assert vector_contents == [PUBLIC_TEXT]


def test_a_read_outside_a_transaction_leaves_no_setting_on_the_connection(pair: World,
                                                                          django_db_blocker: Any) -> None:
    """What the next client of a pooled server connection would find: nothing of this read."""
    scope = _public_reader(pair)
    with django_db_blocker.unblock():
        before = _settings_now()
        scope.fetch(ChunkQuery(select=sql.SQL("c.content"), order_by=sql.SQL("c.embedding <=> %(v)s::vector"),
                               limit=3, params={"v": "[" + ",".join(map(str, unit_vector("x"))) + "]"},
                               local_settings={"hnsw.ef_search": "123", "hnsw.iterative_scan": "relaxed_order"}))
        scope.document_frequencies(["quokkaroo"])
        scope.similar_terms("quokaroo", threshold=0.2)
        after = _settings_now()
    assert before[:2] == ("", "")
    assert after == before


def test_a_failing_read_raises_and_leaves_the_connection_clean(pair: World, django_db_blocker: Any) -> None:
    scope = _public_reader(pair)
    with django_db_blocker.unblock():
        with pytest.raises(Exception, match="division by zero"):
            scope.fetch(ChunkQuery(select=sql.SQL("c.id / 0")))
        assert _settings_now()[:2] == ("", "")
        assert [row["content"] for row in scope.fetch(WORD_QUERY)] == [PUBLIC_TEXT]


def test_a_value_holding_a_percent_sign_is_not_read_as_a_placeholder(pair: World, django_db_blocker: Any) -> None:
    """The settings are merged into one string with the statement's parameters."""
    from tenants.rls import scoped_read

    with django_db_blocker.unblock():
        columns, rows = scoped_read(tenant_id=pair.acme.tenant.id, audience_ids=(pair.acme.public_id,),
                                    statement="SELECT current_setting('application_name') AS name, %(x)s AS x",
                                    params={"x": 1}, local_settings={"application_name": "50% off"})
    assert columns == ["name", "x"]
    assert rows == [("50% off", 1)]


def test_forced_fail_a_session_level_set_is_seen_after_the_statement(pair: World, django_db_blocker: Any) -> None:
    """The detector above goes red for settings that outlive their statement (`SET` without
    LOCAL in the same string)."""
    with django_db_blocker.unblock():
        with connections["default"].cursor() as cursor:
            cursor.execute(f"SET app.tenant_id = '{int(pair.acme.tenant.id)}'; SELECT 1")
        leaked = _settings_now()
        with connections["default"].cursor() as cursor:
            cursor.execute("RESET app.tenant_id")
    assert leaked[0] == str(pair.acme.tenant.id)


def test_an_outermost_rls_transaction_ends_its_settings_with_its_commit(pair: World, django_db_blocker: Any) -> None:
    """Outermost, nothing is cleared by hand (a round trip saved): COMMIT ends SET LOCAL."""
    from tenants.rls import rls_transaction

    with django_db_blocker.unblock():
        with rls_transaction(tenant_id=pair.acme.tenant.id, audience_ids=(pair.acme.public_id,)):
            inside = _settings_now()
        after = _settings_now()
    assert inside[:2] == (str(pair.acme.tenant.id), str(pair.acme.public_id))
    assert after[:2] == ("", "")


@pytest.mark.planted_sql
def test_with_server_side_binding_the_read_is_a_transaction_of_its_own(pair: World, django_db_blocker: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """An operator's `server_side_binding` sends one statement per query: the read falls back
    to BEGIN, settings, statement, COMMIT, and still sees its scope only."""
    connection = connections["default"]
    monkeypatch.setitem(connection.settings_dict, "OPTIONS",
                        {**connection.settings_dict.get("OPTIONS", {}), "server_side_binding": True})
    with django_db_blocker.unblock():
        with CaptureQueriesContext(connection) as sent:
            rows = _public_reader(pair, WeldDropped).fetch(WORD_QUERY)
    assert [row["content"] for row in rows] == [PUBLIC_TEXT]
    assert [q["sql"].split(" ")[0] for q in sent.captured_queries] == ["BEGIN", "SET", "SELECT", "COMMIT"]
