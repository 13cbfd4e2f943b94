"""The console dashboard's numbers: one row per day, computed in SQL over the traces.

Definitions (docs/decisions/0018-console-dashboard-in-sql-and-svg.md):
- queries: traces (greetings write none); escalation rate: escalated / queries;
- mean confidence: the mean top reranker probability the gate read, over traces whose gate
  score is a reranker probability (fusion scores live on another scale and are left out);
- cache hit rate: cache hits / queries; cost per query: total cost / queries (hits cost 0);
- latency: the sum of a trace's recorded stages (rewrite, cache, retrieve, generate,
  citations), p50 and p95 by `percentile_cont`.

Only traces the member could open count (docs/decisions/0033): a trace whose audiences are
not all the member's would otherwise move the numbers it may not read.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from tenants.rls import set_local

DEFAULT_DAYS = 14
MAX_DAYS = 92

# Index: answering_trace_tenant_created_idx (tenant_id, created_at DESC) serves the range.
DAILY_SQL = """
WITH days AS (
    SELECT generate_series(%(first)s::date, %(last)s::date, interval '1 day')::date AS day
), traces AS (
    SELECT (t.created_at AT TIME ZONE 'UTC')::date AS day, t.action, t.cache_hit, t.cost_usd,
           CASE WHEN t.gate ->> 'score_kind' = 'rerank' THEN (t.gate ->> 'score')::float8 END AS confidence,
           (SELECT coalesce(sum(s.value::float8), 0) FROM jsonb_each_text(
                CASE WHEN jsonb_typeof(t.stage_ms) = 'object' THEN t.stage_ms ELSE '{}'::jsonb END) AS s
           ) AS latency_ms
    FROM answering_trace t
    WHERE t.tenant_id = ANY(%(tenants)s)
      AND t.created_at >= %(first)s::date AND t.created_at < %(last)s::date + 1
      -- The member's audiences per tenant (tenants.staff.row_visible); NULL map: a superuser.
      AND (%(audiences)s::jsonb IS NULL OR t.audiences <@ (%(audiences)s::jsonb -> t.tenant_id::text))
)
SELECT d.day,
       count(t.day) AS queries,
       count(t.day) FILTER (WHERE t.action = 'escalated') AS escalations,
       count(t.day) FILTER (WHERE t.cache_hit) AS cache_hits,
       avg(t.confidence) AS mean_confidence,
       coalesce(sum(t.cost_usd), 0) AS cost_usd,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY t.latency_ms) AS latency_p50_ms,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY t.latency_ms) AS latency_p95_ms
FROM days d LEFT JOIN traces t ON t.day = d.day
-- The empty grouping set is the whole range: exact means and percentiles, not means of days.
GROUP BY GROUPING SETS ((d.day), ()) ORDER BY d.day NULLS LAST
"""


@dataclass(frozen=True)
class DayMetrics:
    day: dt.date | None  # None on the row for the whole range
    queries: int
    escalations: int
    cache_hits: int
    mean_confidence: float | None
    cost_usd: Decimal
    latency_p50_ms: float | None
    latency_p95_ms: float | None

    @property
    def escalation_rate(self) -> float | None:
        return self.escalations / self.queries if self.queries else None

    @property
    def cache_hit_rate(self) -> float | None:
        return self.cache_hits / self.queries if self.queries else None

    @property
    def cost_per_query_usd(self) -> Decimal | None:
        return self.cost_usd / self.queries if self.queries else None


def _read_as_staff(statement: str, params: dict[str, Any], tenant_ids: Sequence[int]) -> list[tuple[Any, ...]]:
    """Run a read with the staff row-level security setting admitting exactly `tenant_ids`.

    The previous value is put back afterwards, so a caller already inside the staff context
    (the admin, through tenants.middleware) or inside a test transaction keeps what it had."""
    ids = ",".join(str(int(t)) for t in tenant_ids)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('app.staff_tenant_ids', true)")
        previous = cursor.fetchone()[0] or ""
        set_local(cursor, {"app.staff_tenant_ids": ids})
        try:
            cursor.execute(statement, params)
            return cursor.fetchall()
        finally:
            set_local(cursor, {"app.staff_tenant_ids": previous})


@dataclass(frozen=True)
class Dashboard:
    days: list[DayMetrics]
    total: DayMetrics


def audiences_param(audiences: Mapping[int, Sequence[str]] | None) -> str | None:
    """The member's audience slugs per tenant as a JSON object for `<@` in SQL (None: no filter)."""
    if audiences is None:
        return None
    return json.dumps({str(int(t)): sorted(slugs) for t, slugs in audiences.items()})


def daily_metrics(*, tenant_ids: Sequence[int], audiences: Mapping[int, Sequence[str]] | None,
                  days: int = DEFAULT_DAYS, until: dt.date | None = None) -> Dashboard:
    """One row per UTC day for the `days` days ending `until` (today), empty days included,
    and one row for the whole range. `audiences`: the member's slugs per tenant; a trace counts
    only when all its audiences are among them (None: every trace, for superusers)."""
    days = max(1, min(int(days), MAX_DAYS))
    last = until or timezone.now().astimezone(dt.timezone.utc).date()
    first = last - dt.timedelta(days=days - 1)
    if not tenant_ids:
        empty = [DayMetrics(first + dt.timedelta(days=i), 0, 0, 0, None, Decimal(0), None, None) for i in range(days)]
        return Dashboard(empty, DayMetrics(None, 0, 0, 0, None, Decimal(0), None, None))
    rows = _read_as_staff(DAILY_SQL, {"first": first, "last": last, "tenants": [int(t) for t in tenant_ids],
                                      "audiences": audiences_param(audiences)}, tenant_ids)
    metrics = [DayMetrics(*row) for row in rows]
    return Dashboard(days=metrics[:-1], total=metrics[-1])
