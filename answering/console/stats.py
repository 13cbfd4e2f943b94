"""Numbers for the console: cache hit rate and what the cache saved, per tenant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db import connection

from answering.console.dashboard import audiences_param


@dataclass(frozen=True)
class TenantAnswerStats:
    tenant: str
    answers: int
    escalations: int
    cache_hits: int
    cost_usd: Decimal
    cost_saved_usd: Decimal

    @property
    def hit_rate(self) -> float:
        return self.cache_hits / self.answers if self.answers else 0.0


def answer_stats(tenant_ids: Sequence[int], audiences: Mapping[int, Sequence[str]] | None = None
                 ) -> list[TenantAnswerStats]:
    """Read inside the staff row-level-security context (tenants.middleware). `audiences`: the
    member's slugs per tenant, counting only traces they could open (None: every trace)."""
    # Index: answering_trace_tenant_created_idx (tenant_id, created_at); the audience test is a row filter.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.slug, count(*) FILTER (WHERE a.action = 'answered'),"
            " count(*) FILTER (WHERE a.action = 'escalated'), count(*) FILTER (WHERE a.cache_hit),"
            " coalesce(sum(a.cost_usd), 0),"
            " coalesce(sum((a.details -> 'cache' ->> 'cost_saved_usd')::numeric) FILTER (WHERE a.cache_hit), 0)"
            " FROM answering_trace a JOIN tenants_tenant t ON t.id = a.tenant_id"
            " WHERE a.tenant_id = ANY(%(tenants)s)"
            " AND (%(audiences)s::jsonb IS NULL OR a.audiences <@ (%(audiences)s::jsonb -> a.tenant_id::text))"
            " GROUP BY t.slug ORDER BY t.slug",
            {"tenants": list(tenant_ids), "audiences": audiences_param(audiences)},
        )
        return [TenantAnswerStats(*row) for row in cursor.fetchall()]
