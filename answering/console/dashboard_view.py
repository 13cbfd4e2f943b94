"""The dashboard page inside the admin: charts and a table of the same numbers, per day."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.contrib.admin import AdminSite
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext as _

from answering.console import charts, triage
from answering.console.dashboard import DEFAULT_DAYS, Dashboard, daily_metrics
from answering.console.reply_times import ReplyTimes, reply_times
from answering.models import Trace
from tenants.models import Tenant
from tenants import staff
from tenants.staff import StaffAccess

DAY_CHOICES = (7, 14, 30, 90)


def _days(request: HttpRequest) -> int:
    try:
        value = int(request.GET.get("days", DEFAULT_DAYS))
    except ValueError:
        return DEFAULT_DAYS
    return value if value in DAY_CHOICES else DEFAULT_DAYS


def build_charts(dashboard: Dashboard) -> list[Any]:
    rows = dashboard.days
    days = [r.day for r in rows if r.day is not None]
    return [
        charts.line_chart(title=_("Escalation rate"), days=days, y_max=1.0, y_format=charts.percent,
                          series=[charts.Series(_("escalated"), [r.escalation_rate for r in rows], "#b91c1c")]),
        charts.line_chart(title=_("Mean confidence (top reranker probability)"), days=days, y_max=1.0,
                          y_format=charts.plain,
                          series=[charts.Series(_("confidence"), [r.mean_confidence for r in rows], "#417690")]),
        charts.line_chart(title=_("Cache hit rate"), days=days, y_max=1.0, y_format=charts.percent,
                          series=[charts.Series(_("cache hits"), [r.cache_hit_rate for r in rows], "#2563eb")]),
        charts.line_chart(title=_("Cost per query"), days=days, y_format=charts.usd,
                          series=[charts.Series(_("cost/query"), [None if r.cost_per_query_usd is None
                                                               else float(r.cost_per_query_usd) for r in rows],
                                                "#047857")]),
        charts.line_chart(title=_("Latency"), days=days, y_format=charts.ms,
                          series=[charts.Series("p50", [r.latency_p50_ms for r in rows], "#417690"),
                                  charts.Series("p95", [r.latency_p95_ms for r in rows], "#c2410c")]),
    ]


def reply_time_charts(rows: list[ReplyTimes]) -> list[Any]:
    days = [r.day for r in rows]
    return [
        charts.line_chart(title=_("Time to first reply (hours)"), days=days, y_format=charts.plain,
                          series=[charts.Series("p50", [r.reply_p50_hours for r in rows], "#417690"),
                                  charts.Series("p90", [r.reply_p90_hours for r in rows], "#c2410c")]),
        charts.line_chart(title=_("Time to resolve (hours)"), days=days, y_format=charts.plain,
                          series=[charts.Series("p50", [r.resolve_p50_hours for r in rows], "#417690"),
                                  charts.Series("p90", [r.resolve_p90_hours for r in rows], "#c2410c")]),
    ]


def _triage_counts(access: StaffAccess, since: dt.date) -> dict[str, int]:
    traces = Trace.objects.filter(staff.within_audiences(access, field="audiences", key="slug"),
                                  tenant_id__in=access.tenant_ids(), feedback__isnull=False,
                                  created_at__date__gte=since).order_by("-created_at")[:2000]
    return triage.triage_counts(traces=traces)


def dashboard_view(request: HttpRequest, *, admin_site: AdminSite, access: StaffAccess) -> TemplateResponse:
    """Numbers over the traces the member could open: their tenants, within their audiences."""
    days = _days(request)
    tenant_ids = access.tenant_ids()
    dashboard = daily_metrics(tenant_ids=tenant_ids, audiences=access.slugs_by_tenant(), days=days)
    handling = reply_times(tenant_ids=tenant_ids, audiences=access.slugs_by_tenant(), days=days)
    first = timezone.now().date() - dt.timedelta(days=days - 1)
    counts = _triage_counts(access, first)
    context = {
        **admin_site.each_context(request),
        "title": _("Answer dashboard"),
        "charts": build_charts(dashboard) + reply_time_charts(handling),
        "reply_times": [r for r in handling if r.reply_p50_hours is not None or r.resolve_p50_hours is not None],
        "rows": dashboard.days,
        "total": dashboard.total,
        "days": days,
        "day_choices": DAY_CHOICES,
        "tenants": list(Tenant.objects.filter(id__in=list(tenant_ids)).values_list("slug", flat=True)),
        "triage": [(c, triage.CATEGORY_LABELS[c], counts[c]) for c in triage.CATEGORIES],
    }
    return TemplateResponse(request, "admin/answering/dashboard.html", context)
