"""Models mirror raw-SQL tables: every model column must exist in the table."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection


@pytest.mark.django_db
def test_unmanaged_models_match_their_tables() -> None:
    mismatches = []
    for model in apps.get_models():
        if model._meta.managed:
            continue
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s",
                [model._meta.db_table],
            )
            columns = {row[0] for row in cursor.fetchall()}
        assert columns, f"table {model._meta.db_table} is missing"
        for field in model._meta.concrete_fields:
            if field.column not in columns:
                mismatches.append(f"{model._meta.db_table}.{field.column}")
    assert mismatches == []


@pytest.mark.django_db
def test_the_database_refuses_a_mismatched_embedding_dimension() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'corpus_chunk'::regclass AND attname = 'embedding'"
        )
        assert cursor.fetchone() == (384,)
