"""What one answer sends to PostgreSQL, outside any test transaction as in production: a pin
on the hot path's statement count (docs/decisions/0131), and every chunk read in one trip."""

from __future__ import annotations

from typing import Any

from django.db import connections, transaction
from django.test.utils import CaptureQueriesContext

from answering.models import Trace
from answering.pipeline.flow import answer
from tenants.models import Tenant
from tenants.rls import tenant_context

# The scoped reads of one answered question on the demo corpus (query terms, their statistics,
# the two legs, the rows, the reranker's states, the claims' vectors) and the trace it writes.
ANSWER_STATEMENTS = 14


def _answer_once(question: str, django_db_blocker: Any) -> tuple[Any, list[str]]:
    with django_db_blocker.unblock():
        tenant = Tenant.objects.get(slug="paylane")
        with CaptureQueriesContext(connections["default"]) as sent:
            result = answer(tenant=tenant, audiences=["public"], question=question)
        if result.trace_id is not None:
            with tenant_context(tenant.id):
                Trace.objects.filter(pk=result.trace_id).delete()
    return result, [query["sql"] for query in sent.captured_queries]


def test_an_answer_sends_a_pinned_number_of_statements_and_reads_chunks_in_one_trip(
        demo_corpus: Any, django_db_blocker: Any, settings: Any) -> None:
    settings.CACHE_ENABLED = False
    _answer_once("How long do refunds take?", django_db_blocker)  # the encoder loads
    result, statements = _answer_once("How long do refunds take?", django_db_blocker)
    assert result.action == "answered"
    listing = "\n".join(statement[:100] for statement in statements)
    assert len(statements) == ANSWER_STATEMENTS, listing
    chunk_reads = [s for s in statements if '"corpus_chunk"' in s]
    assert chunk_reads and all(s.startswith('SET LOCAL "app"."tenant_id"') for s in chunk_reads), listing
    assert "BEGIN" not in statements[: statements.index(chunk_reads[-1])], listing


def test_inside_a_transaction_the_same_answer_reads_through_savepoints(demo_corpus: Any, django_db_blocker: Any,
                                                                      settings: Any) -> None:
    """The fallback path (a caller's transaction) gives the same answer from the same rows."""
    settings.CACHE_ENABLED = False
    question = "What does the Growth plan cost?"
    alone, _ = _answer_once(question, django_db_blocker)
    with django_db_blocker.unblock(), transaction.atomic():
        inside = answer(tenant=Tenant.objects.get(slug="paylane"), audiences=["public"], question=question)
        transaction.set_rollback(True)
    assert inside.action == alone.action == "answered"
    assert (inside.text, inside.sources) == (alone.text, alone.sources)
