"""Models mirror raw-SQL tables: every unmanaged model must say what its table says.

The tables are made by `RunSQL` in each app's migrations/; the models are `managed = False`
mirrors written by hand. For every concrete field of every unmanaged model (found through
apps.get_models(), so a new one is checked without being listed), against the migrated test
database's catalog (tenants/tests/schema_compare.py, two queries for the whole schema):

- column: the field's column exists.
- type: `field.db_type(connection)` and the column's `format_type` name the same type once
  aliases are folded (varchar(n) = character varying(n), int8 = bigint, timestamptz, arrays),
  lengths, precision and scale included.
- null: `field.null` equals the column's nullability, both ways; a primary key is NOT NULL.
- default: Django writes every column on insert, so a database default is never applied
  through the ORM, and a model default never reaches a raw-SQL insert. Hence:
  a model default (or auto_now / auto_now_add, read as now()) needs the same column default,
  so both writers get the same row; a column default with no model default is allowed only
  where the ORM writes the same thing anyway ('' for a NOT NULL string field), otherwise an
  ORM insert writes NULL or '' where a raw-SQL insert gets the default. An auto primary key
  needs a sequence or identity column. Defaults are compared as values where they are
  literals (strings, numbers, booleans, jsonb, the empty array, now()).
- foreign key: a ForeignKey/OneToOneField's column references the related model's table and
  target column. A composite key counts: (tenant_id, membership_id) -> membership (tenant_id,
  id) pins tenant_id to a membership's tenant_id, which references tenants_tenant.id, so the
  model's `tenant` foreign key holds through the parent (followed up to three hops). A
  database foreign key on a column the model declares as a plain field is a finding too.
- on_delete: enforced, because Django emulates on_delete in Python for ORM deletes while
  raw-SQL deletes (and the database's own cascades) follow ON DELETE; if they differ, the same
  delete does two things depending on the path. CASCADE = CASCADE, SET_NULL = SET NULL,
  SET_DEFAULT = SET DEFAULT, DO_NOTHING = any; RESTRICT = NO ACTION (both let rows deleted in
  the same operation go, e.g. a tenant's audiences with its documents) and PROTECT = RESTRICT
  (both refuse even then).
  Through a composite chain the hop nearest the deleted row that does not cascade decides.
- unmirrored: a NOT NULL column without a default that no field mirrors makes ORM inserts
  fail; extra nullable or defaulted columns are fine.

Uniqueness, CHECK constraints and indexes are not compared. A table without a model (used
through raw SQL) is not this test's concern. A mismatch kept on purpose is in ALLOWED with
its reason; an entry that no longer matches anything fails the test too.
"""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import IntegrityError, connection, models, transaction
from django.db.models import RestrictedError
from django.test.utils import isolate_apps

from tenants.tests.schema_compare import Mismatch, compare

ALLOWED: dict[tuple[str, str, str], str] = {
    # The vector is kept out of the ORM like the chunks' (no vector field, no model insert):
    # entries are written only by cachelayer.service in raw SQL, the admin cannot add one.
    ("cachelayer_entry", "query_embedding", "unmirrored"): "written by cachelayer.service only",
}


def unmanaged_models() -> list[type[models.Model]]:
    return [model for model in apps.get_models() if not model._meta.managed]


def findings(models_: list[type[models.Model]] | None = None) -> set[tuple[str, str, str]]:
    return {m.key for m in compare(unmanaged_models() if models_ is None else models_, connection)}


@pytest.mark.django_db
def test_unmanaged_models_match_their_tables() -> None:
    found = compare(unmanaged_models(), connection)
    assert [str(m) for m in found if m.key not in ALLOWED] == []
    assert sorted(set(ALLOWED) - {m.key for m in found}) == [], "allowed mismatches that no longer occur"


@pytest.mark.django_db
def test_the_database_refuses_a_mismatched_embedding_dimension() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'corpus_chunk'::regclass AND attname = 'embedding'"
        )
        assert cursor.fetchone() == (384,)


# --- Forced fails: a planted mismatch of each aspect turns the check red ---------------------
def field(label: str, name: str) -> Any:
    return apps.get_model(label)._meta.get_field(name)


@pytest.mark.django_db
def test_forced_fail_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(field("tenants.Tenant", "name"), "max_length", 100)
    found = compare(unmanaged_models(), connection)
    assert [str(m) for m in found if m.key[2] == "type"] == [
        "tenants_tenant.name [type]: model 'varchar(100)', table 'character varying(200)'"
    ]


@pytest.mark.django_db
def test_forced_fail_nullability_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(field("tenants.ApiKey", "revoked_at"), "null", False)
    monkeypatch.setattr(field("tenants.Tenant", "name"), "null", True)
    assert {("tenants_apikey", "revoked_at", "null"), ("tenants_tenant", "name", "null")} <= findings()


@pytest.mark.django_db
def test_forced_fail_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(field("corpus.Document", "language"), "default", "simple")  # differs
    monkeypatch.setattr(field("answering.Trace", "question"), "default", "?")  # column has none
    monkeypatch.setattr(field("evaluation.EvalRun", "created_at"), "auto_now_add", False)  # now() unused
    assert {
        ("corpus_document", "language", "default"),
        ("answering_trace", "question", "default"),
        ("evaluation_run", "created_at", "default"),
    } <= findings()


@pytest.mark.django_db
def test_forced_fail_on_delete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(field("tenants.Audience", "tenant").remote_field, "on_delete", models.PROTECT)
    # Through the composite chain: membership_audience.tenant_id -> membership -> tenant.
    monkeypatch.setattr(field("tenants.MembershipAudience", "tenant").remote_field, "on_delete", models.SET_NULL)
    assert {("tenants_audience", "tenant_id", "on_delete"),
            ("tenants_membership_audience", "tenant_id", "on_delete")} <= findings()


@pytest.fixture
def throwaway() -> Iterator[None]:
    """Throwaway models live in their own registry, so the real check never sees them."""
    with isolate_apps("tenants"):
        yield


@pytest.mark.django_db
@pytest.mark.usefixtures("throwaway")
def test_forced_fail_foreign_keys_and_columns() -> None:
    class NotTheTenant(models.Model):
        class Meta:
            app_label = "tenants"
            managed = False
            db_table = "corpus_ingestjob"

    class WrongTarget(models.Model):  # evaluation_run.tenant_id references tenants_tenant
        tenant = models.ForeignKey(NotTheTenant, on_delete=models.CASCADE)

        class Meta:
            app_label = "tenants"
            managed = False
            db_table = "evaluation_run"

    class PlainColumn(models.Model):  # no `report`, NOT NULL without a default; a made-up column
        tenant_id = models.BigIntegerField()
        nonexistent = models.TextField()

        class Meta:
            app_label = "tenants"
            managed = False
            db_table = "evaluation_run"

    wrong = [str(m) for m in compare([WrongTarget], connection) if m.aspect == "foreign key"]
    assert wrong == ["evaluation_run.tenant_id [foreign key]: model references corpus_ingestjob.id, "
                     "the column references tenants_tenant.id"]
    plain = compare([PlainColumn], connection)
    assert Mismatch("evaluation_run", "tenant_id", "foreign key",
                    "plain model field, but the column references tenants_tenant.id") in plain
    assert {("evaluation_run", "report", "unmirrored"), ("evaluation_run", "nonexistent", "column")} <= {
        m.key for m in plain
    }


# --- The mismatches the check found, fixed on the model side ---------------------------------
@pytest.mark.django_db
def test_a_superseding_document_is_not_deleted_by_the_orm_either(acme: Any) -> None:
    """superseded_by was SET_NULL in the model, NO ACTION in the table: the ORM silently
    dropped the supersession history a raw-SQL delete refuses to lose. Now both refuse, and
    deleting both documents in one operation still works, as one SQL statement would."""
    from corpus.models import Document
    from tenants.rls import rls_transaction

    tenant, audience = acme.tenant, acme.public_id
    with rls_transaction(tenant_id=tenant.id, all_audiences=True):
        new = Document.objects.create(tenant=tenant, audience_id=audience, slug="new", title="N", content_hash="n")
        Document.objects.create(tenant=tenant, audience_id=audience, slug="old", title="O", content_hash="o",
                                status=Document.Status.ARCHIVED, superseded_by=new)
        with pytest.raises(RestrictedError):
            new.delete()
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM corpus_document WHERE id = %s", [new.pk])
        assert Document.objects.filter(tenant=tenant).delete()[0] == 2



@pytest.mark.django_db
def test_a_tenant_with_documents_is_deleted_by_the_orm_as_by_sql(acme: Any) -> None:
    """Document.audience was PROTECT over the table's NO ACTION: `DELETE FROM tenants_tenant`
    takes the audiences and documents with it, the ORM refused (ProtectedError). Now RESTRICT:
    the tenant goes on both paths, and an audience that documents still use is kept on both."""
    from corpus.models import Document
    from tenants.models import Audience, Tenant
    from tenants.rls import rls_transaction

    tenant = acme.tenant
    with rls_transaction(tenant_id=tenant.id, all_audiences=True):
        Document.objects.create(tenant=tenant, audience_id=acme.public_id, slug="a", title="A", content_hash="a")
        with pytest.raises(RestrictedError):
            Audience.objects.get(pk=acme.public_id).delete()
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM tenants_audience WHERE id = %s", [acme.public_id])
        tenant.delete()
    assert not Tenant.objects.filter(pk=tenant.pk).exists()


@pytest.mark.django_db(databases="__all__")  # makemigrations reads the history of every database
def test_the_migrations_hold_every_model_change() -> None:
    """A mirror's Meta or fields changed without a migration leave Django's migration state
    behind the code: the next `makemigrations` of anyone would write someone else's change."""
    out = StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exit_:
        pytest.fail(f"models changed without a migration (exit {exit_.code}):\n{out.getvalue()}")
