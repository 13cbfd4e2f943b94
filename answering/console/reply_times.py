"""Queue hygiene on the dashboard: time to first agent reply and time to resolve, p50 and p90
per UTC day of the escalation's creation, in hours (docs/decisions/0044).

An escalation counts on the day it was opened, once it has the reply (or resolution); one
still waiting is not in that day's numbers yet. The audience rule is the dashboard's: only
escalations whose trace the member could open.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.utils import timezone

from answering.console.dashboard import DEFAULT_DAYS, MAX_DAYS, _read_as_staff, audiences_param

# Index: answering_escalation_tenant_status_idx (tenant_id, status, created_at DESC) serves the
# range; the trace is joined by its primary key for the audiences.
REPLY_TIMES_SQL = """
WITH days AS (
    SELECT generate_series(%(first)s::date, %(last)s::date, interval '1 day')::date AS day
), handled AS (
    SELECT (e.created_at AT TIME ZONE 'UTC')::date AS day,
           extract(epoch FROM e.first_reply_at - e.created_at) / 3600.0 AS reply_hours,
           extract(epoch FROM e.resolved_at - e.created_at) / 3600.0 AS resolve_hours
    FROM answering_escalation e JOIN answering_trace t ON t.tenant_id = e.tenant_id AND t.id = e.trace_id
    WHERE e.tenant_id = ANY(%(tenants)s)
      AND e.created_at >= %(first)s::date AND e.created_at < %(last)s::date + 1
      AND (%(audiences)s::jsonb IS NULL OR t.audiences <@ (%(audiences)s::jsonb -> t.tenant_id::text))
)
SELECT d.day,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY h.reply_hours) AS reply_p50,
       percentile_cont(0.9) WITHIN GROUP (ORDER BY h.reply_hours) AS reply_p90,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY h.resolve_hours) AS resolve_p50,
       percentile_cont(0.9) WITHIN GROUP (ORDER BY h.resolve_hours) AS resolve_p90
FROM days d LEFT JOIN handled h ON h.day = d.day
GROUP BY d.day ORDER BY d.day
"""


@dataclass(frozen=True)
class ReplyTimes:
    day: dt.date
    reply_p50_hours: float | None
    reply_p90_hours: float | None
    resolve_p50_hours: float | None
    resolve_p90_hours: float | None


def reply_times(*, tenant_ids: Sequence[int], audiences: Mapping[int, Sequence[str]] | None,
                days: int = DEFAULT_DAYS, until: dt.date | None = None) -> list[ReplyTimes]:
    days = max(1, min(int(days), MAX_DAYS))
    last = until or timezone.now().astimezone(dt.timezone.utc).date()
    first = last - dt.timedelta(days=days - 1)
    if not tenant_ids:
        return [ReplyTimes(first + dt.timedelta(days=i), None, None, None, None) for i in range(days)]
    rows = _read_as_staff(REPLY_TIMES_SQL, {"first": first, "last": last, "tenants": [int(t) for t in tenant_ids],
                                            "audiences": audiences_param(audiences)}, tenant_ids)
    return [ReplyTimes(*row) for row in rows]
