"""Adding and changing a tenant's web sources: the checks, the row, the schedule."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from corpus.config import SyncLimits
from corpus.models import WebSource
from corpus.sources.websync import crawl
from corpus.sources.websync.fetch import Refused, Resolver, check_url, system_resolve
from corpus.sources.websync.tasks import websync_schedule
from tenants.models import Audience, Tenant
from tenants.rls import tenant_context

EDITABLE = ("name", "start_url", "kind", "include_patterns", "exclude_patterns", "page_limit", "schedule")


class SourceRejected(ValueError):
    pass


def websource_check(*, tenant: Tenant, audience: Audience, start_url: str, kind: str, page_limit: int,
                    schedule: str, resolve: Resolver = system_resolve) -> str:
    """The normalized start URL, or SourceRejected naming the problem. The address is checked
    now for a clear answer, and again at every fetch (a name may point elsewhere later)."""
    if audience.tenant_id != tenant.pk:
        raise SourceRejected(f"audience {audience.slug} belongs to another tenant")
    if kind not in WebSource.Kind.values:
        raise SourceRejected(f"kind {kind!r} is not one of {', '.join(WebSource.Kind.values)}")
    if schedule not in WebSource.Schedule.values:
        raise SourceRejected(f"schedule {schedule!r} is not one of {', '.join(WebSource.Schedule.values)}")
    ceiling = SyncLimits.from_settings().max_pages
    if not 1 <= page_limit <= ceiling:
        raise SourceRejected(f"page limit {page_limit} is outside 1..{ceiling}")
    url = crawl.normalize(start_url)
    try:
        check_url(url, resolve=resolve)
    except Refused as exc:
        raise SourceRejected(str(exc)) from exc
    return url


def websource_save(*, tenant: Tenant, audience: Audience, values: dict[str, Any], source_id: int | None = None,
                   created_by_id: int | None = None, resolve: Resolver = system_resolve) -> WebSource:
    """Create (source_id None) or change a source; a new or changed schedule starts its chain now."""
    fields = {name: values[name] for name in EDITABLE if name in values}
    fields["start_url"] = websource_check(
        tenant=tenant, audience=audience, start_url=fields.get("start_url", ""), kind=fields.get("kind", "start"),
        page_limit=int(fields.get("page_limit", 200)), schedule=fields.get("schedule", "manual"), resolve=resolve)
    with transaction.atomic(), tenant_context(tenant.id):
        if source_id is None:
            source = WebSource.objects.create(tenant=tenant, audience=audience, created_by_id=created_by_id, **fields)
            rescheduled = True
        else:
            # Index: corpus_websource_pkey (tenant_id, id).
            source = WebSource.objects.get(tenant=tenant, pk=source_id)
            rescheduled = source.schedule != fields["schedule"]
            WebSource.objects.filter(tenant=tenant, pk=source_id).update(audience=audience, **fields)
            # Not refresh_from_db(): it reads by primary key alone, every shard on Citus.
            source = WebSource.objects.get(tenant=tenant, pk=source_id)
        if rescheduled:
            websync_schedule(tenant=tenant, source_id=source.pk, start=_now_if_scheduled(fields["schedule"]))
    return source


def _now_if_scheduled(schedule: str) -> Any:
    return timezone.now() if schedule != WebSource.Schedule.MANUAL else None
