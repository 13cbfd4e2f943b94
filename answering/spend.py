"""A hard daily spend cap per tenant: past it, generation falls back to the extractive answerer.

The pipeline asks `chain_within_cap` at the one place it chooses its provider chain. Spend is
what the tenant's traces of the current UTC day cost (cache hits cost nothing, so they do not
count). The check runs before generation, so requests already in flight when the cap is
crossed still finish on the model: the overshoot is bounded by concurrency times the cost of
one answer, which is why the cap should sit a few answers below what must never be exceeded.
"""

from __future__ import annotations

import logging
from datetime import datetime, time, timezone as dt_timezone
from decimal import Decimal
from typing import TypeVar

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from answering.models import Trace
from tenants.models import Tenant
from tenants.rls import tenant_context

log = logging.getLogger(__name__)
ChainT = TypeVar("ChainT")


def daily_cap_usd(*, tenant: Tenant) -> Decimal:
    own = tenant.daily_spend_cap_usd
    return Decimal(str(own)) if own is not None else Decimal(str(settings.ANSWER_DAILY_SPEND_CAP_USD))


def spend_today_usd(*, tenant: Tenant) -> Decimal:
    midnight = datetime.combine(timezone.now().astimezone(dt_timezone.utc).date(), time.min, tzinfo=dt_timezone.utc)
    with tenant_context(tenant.id):
        total = Trace.objects.filter(tenant=tenant, created_at__gte=midnight).aggregate(total=Sum("cost_usd"))["total"]
    return Decimal(total or 0)


def over_daily_cap(*, tenant: Tenant) -> bool:
    return spend_today_usd(tenant=tenant) >= daily_cap_usd(tenant=tenant)


def chain_within_cap(*, tenant: Tenant, chain: ChainT | None) -> ChainT | None:
    """The chain, or None (the extractive answerer) once today's spend has reached the cap."""
    if not chain:
        return chain
    if over_daily_cap(tenant=tenant):
        log.warning("tenant %s reached its daily spend cap of %s USD; answering extractively",
                    tenant.slug, daily_cap_usd(tenant=tenant))
        return None
    return chain
