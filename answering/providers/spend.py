"""A hard daily spend cap per tenant, counted on every provider call.

Every provider request leaves through ProviderChain.complete, which asks its meter first and
tells it afterwards what the provider billed. For a tenant that meter is a TenantMeter: it
reads the tenant's row of tenants_daily_spend (one row per tenant and UTC day) before each
call and refuses with SpendCapReached once the day's spend has reached the cap, and it adds
each call's tokens and cost to that row in one atomic UPSERT. Rewriting, relevance scoring,
generation, the contextualizer and the judge are all counted, by stage, both on the counter
and on the question's trace (docs/decisions/0037-every-provider-call-is-metered.md).

How far past the cap a day can go: the check and the add are per call, not a reservation, so
every call admitted while the counter was below the cap still lands. The overshoot is at most
(calls in flight when the cap is crossed) x (the cost of the dearest single call); one worker
thread has at most one call in flight, so with W worker threads across all processes the
counter ends below cap + W x max_call_cost. The cap should sit that far below what must never
be exceeded.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from django.conf import settings
from django.utils import timezone

from answering.providers.chain import (
    ProviderChain,
    SpendCapReached,
    StageUsage,
    Tally,
    Usage,
    metering,
)
from tenants.models import Tenant
from tenants.rls import tenant_context

__all__ = ["SpendCapReached", "TenantMeter", "chain_within_cap", "daily_cap_usd", "metering", "over_daily_cap",
           "record_spend", "spend_today_usd", "usage_today"]

log = logging.getLogger(__name__)
ChainT = TypeVar("ChainT")

# The day and the time come from the app (UTC) as parameters, and ON CONFLICT ... SET holds only
# IMMUTABLE functions: Citus refuses clock_timestamp() and even the STABLE jsonb_build_object()
# there, so the stage's totals are rebuilt with jsonb_set and text casts (docs/decisions/0121).
# Reads one row by the primary key (tenant_id, day), under the tenant's RLS context.
_READ = """
SELECT s.cost_usd, s.calls, s.input_tokens, s.output_tokens, s.by_stage
FROM tenants_daily_spend s WHERE s.tenant_id = %(tenant_id)s AND s.day = %(day)s
"""


def _stage_total(field: str, cast: str) -> str:
    """The stage's running total of `field` plus this call's, as jsonb, with immutable casts only."""
    added = "1" if field == "calls" else f"excluded.{field}"
    return (f"((coalesce((s.by_stage #>> ARRAY[%(stage)s::text, '{field}'])::{cast}, 0) + {added})::text)::jsonb")


# The whole add is one statement: concurrent calls serialise on the row lock of the primary
# key (tenant_id, day), so no increment is lost and the stage totals move with the total.
_ADD = f"""
INSERT INTO tenants_daily_spend AS s (tenant_id, day, calls, input_tokens, output_tokens, cost_usd, by_stage,
                                      updated_at)
VALUES (%(tenant_id)s, %(day)s, 1, %(input_tokens)s, %(output_tokens)s, %(cost)s,
        jsonb_build_object(%(stage)s::text, jsonb_build_object('calls', 1, 'input_tokens', %(input_tokens)s,
                                                               'output_tokens', %(output_tokens)s, 'cost_usd', %(cost)s)),
        %(now)s)
ON CONFLICT (tenant_id, day) DO UPDATE SET
    calls = s.calls + 1,
    input_tokens = s.input_tokens + excluded.input_tokens,
    output_tokens = s.output_tokens + excluded.output_tokens,
    cost_usd = s.cost_usd + excluded.cost_usd,
    by_stage = jsonb_set(s.by_stage, ARRAY[%(stage)s::text], jsonb_set(jsonb_set(jsonb_set(jsonb_set('{{}}'::jsonb,
        '{{calls}}', {_stage_total("calls", "bigint")}),
        '{{input_tokens}}', {_stage_total("input_tokens", "bigint")}),
        '{{output_tokens}}', {_stage_total("output_tokens", "bigint")}),
        '{{cost_usd}}', {_stage_total("cost_usd", "numeric")})),
    updated_at = excluded.updated_at
RETURNING s.cost_usd
"""


def _today() -> dt.date:
    return timezone.now().astimezone(dt.timezone.utc).date()


@dataclass(frozen=True)
class DaySpend:
    cost_usd: Decimal
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    by_stage: dict[str, dict[str, Any]] = field(default_factory=dict)


def daily_cap_usd(*, tenant: Tenant) -> Decimal:
    own = tenant.daily_spend_cap_usd
    return Decimal(str(own)) if own is not None else Decimal(str(settings.ANSWER_DAILY_SPEND_CAP_USD))


def usage_today(*, tenant: Tenant) -> DaySpend:
    """The tenant's counter for the current UTC day (zero before its first call)."""
    with tenant_context(tenant.id) as cursor:
        cursor.execute(_READ, {"tenant_id": tenant.id, "day": _today()})
        row = cursor.fetchone()
    if row is None:
        return DaySpend(cost_usd=Decimal(0))
    by_stage = row[4] if isinstance(row[4], dict) else json.loads(row[4] or "{}")
    return DaySpend(cost_usd=Decimal(row[0]), calls=int(row[1]), input_tokens=int(row[2]),
                    output_tokens=int(row[3]), by_stage=by_stage)


def spend_today_usd(*, tenant: Tenant) -> Decimal:
    return usage_today(tenant=tenant).cost_usd


def record_spend(*, tenant: Tenant, stage: str, usage: Usage) -> Decimal:
    """Add one call to the tenant's counter; returns the day's total after it. Commits on its
    own when no transaction is open (every product path), so other workers see it at once."""
    now = timezone.now()
    params = {"tenant_id": tenant.id, "stage": stage[:40], "input_tokens": int(usage.input_tokens),
              "output_tokens": int(usage.output_tokens), "cost": Decimal(str(round(float(usage.cost_usd), 9))),
              "day": now.astimezone(dt.timezone.utc).date(), "now": now}
    with tenant_context(tenant.id) as cursor:
        cursor.execute(_ADD, params)
        return Decimal(cursor.fetchone()[0])


def over_daily_cap(*, tenant: Tenant) -> bool:
    return spend_today_usd(tenant=tenant) >= daily_cap_usd(tenant=tenant)


@dataclass
class TenantMeter(Tally):
    """One question's (or one job's) provider calls, billed to one tenant's daily counter.

    Once it has refused a call it refuses the rest without asking the database again: the
    day's counter only grows, and a question may ask the relevance scorer twenty times."""

    tenant: Tenant | None = None
    refused_reason: str = ""

    def admit(self, *, stage: str) -> None:
        if self.tenant is None:
            raise SpendCapReached("no tenant to bill: a TenantMeter needs a tenant")
        if not self.refused_reason:
            spent, cap = spend_today_usd(tenant=self.tenant), daily_cap_usd(tenant=self.tenant)
            if spent >= cap:
                self.refused_reason = (f"tenant {self.tenant.slug} has spent {spent:.6f} USD today, its daily "
                                       f"spend cap is {cap:.6f} USD: no more provider calls until the UTC day turns "
                                       "or the cap is raised")
                log.warning("%s (refused a %s call)", self.refused_reason, stage)
        if self.refused_reason:
            self.stages.setdefault(stage, StageUsage()).refused += 1
            raise SpendCapReached(self.refused_reason)

    def record(self, *, stage: str, usage: Usage) -> None:
        super().record(stage=stage, usage=usage)
        if self.tenant is not None:
            record_spend(tenant=self.tenant, stage=stage, usage=usage)

    def stamp(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Put every stage's usage on a trace: the totals in its columns, the split in details."""
        whole = self.total()
        fields.update(input_tokens=whole.input_tokens, output_tokens=whole.output_tokens, cost_usd=whole.cost_usd)
        fields.setdefault("details", {})["usage"] = self.as_dict()
        return fields


def chain_within_cap(*, tenant: Tenant, chain: ChainT | None, meter: TenantMeter | None = None) -> ChainT | None:
    """The chain billed to `meter`, or None (the extractive answerer) once today's spend has reached the cap."""
    if not chain:
        return chain
    if over_daily_cap(tenant=tenant):
        log.warning("tenant %s reached its daily spend cap of %s USD; answering extractively",
                    tenant.slug, daily_cap_usd(tenant=tenant))
        return None
    if meter is not None and isinstance(chain, ProviderChain):
        return chain.metered(meter, stage="generate")  # type: ignore[return-value]  # ChainT is ProviderChain here; metered() makes another
    return chain
