"""The answer-mode page: per tenant, whether answers come from a model (which providers, which
models) or from the offline extractive answerer, and why (issue 48 item 5).

The page decides the mode the way the answer path does (answering/pipeline/flow.py): the
operator's chain (`ProviderChain.configured`), given way to the extractive answerer once the
tenant's day has reached its spend cap (the rule of `spend.over_daily_cap`). A member sees
the rows of their own tenants only; the provider chain is the deployment's, the same for every
tenant, but whether the key variable is set and the full endpoint are shown to superusers only
(they run the server; a tenant's agent has no use for another machine's address).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlsplit

from django.contrib.admin import AdminSite
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _

from answering.providers import Provider, ProviderError
from answering.providers import spend
from answering.providers.base import HttpProvider
from answering.providers.chain import ProviderChain
from tenants.models import Tenant
from tenants.staff import StaffAccess

EXTRACTIVE = "extractive"  # the mode's key; the page says "extractive (offline, no model)", translated


@dataclass(frozen=True)
class ProviderLine:
    dialect: str
    host: str  # where the calls go, without path or credentials: what a member may read
    model: str
    endpoint: str  # the whole base URL: shown to superusers only
    key_env: str
    key_set: bool


@dataclass(frozen=True)
class TenantMode:
    slug: str
    name: str
    mode: str  # EXTRACTIVE, or "model"
    why: str
    providers: tuple[ProviderLine, ...]
    spent_today_usd: Decimal
    calls_today: int
    cap_usd: Decimal


def provider_line(provider: Provider) -> ProviderLine:
    config = provider.config if isinstance(provider, HttpProvider) else None
    dialect = config.dialect if config else provider.name.split("@", 1)[0]
    endpoint = config.base_url if config else ""
    key_env = config.api_key_env if config else ""
    try:
        key_set = bool(config and config.api_key)
    except ProviderError:  # the variable is empty: every call through this entry fails over
        key_set = False
    return ProviderLine(dialect=dialect, host=urlsplit(endpoint).hostname or "", model=provider.model,
                        endpoint=endpoint, key_env=key_env, key_set=key_set)


def tenant_mode(*, tenant: Tenant, chain: ProviderChain | None) -> TenantMode:
    """One tenant's mode now, by the answer path's rule: no chain, or the day's cap reached, is extractive."""
    today, cap = spend.usage_today(tenant=tenant), spend.daily_cap_usd(tenant=tenant)
    lines = tuple(provider_line(p) for p in chain.providers) if chain else ()
    if not chain:
        mode, why = EXTRACTIVE, _("no model provider is configured (ANSWER_PROVIDERS is empty)")
    elif today.cost_usd >= cap:
        mode, why = EXTRACTIVE, _("today's spend (%(spent)s USD) has reached the daily cap (%(cap)s USD): "
                                  "extractive until the UTC day turns or the cap is raised") % {
                                      "spent": f"{today.cost_usd:.6f}", "cap": f"{cap:.6f}"}
    else:
        mode, why = "model", _("answers are written by the first provider of the chain that replies")
    return TenantMode(slug=tenant.slug, name=tenant.name, mode=mode, why=why, providers=lines,
                      spent_today_usd=today.cost_usd, calls_today=today.calls, cap_usd=cap)


def configured_chain() -> tuple[ProviderChain | None, str]:
    """The operator's chain, or None and why: a malformed ANSWER_PROVIDERS is shown, not a 500."""
    try:
        return ProviderChain.configured(), ""
    except ImproperlyConfigured as exc:
        return None, str(exc)


def answer_mode_view(request: HttpRequest, *, admin_site: AdminSite, access: StaffAccess) -> TemplateResponse:
    chain, problem = configured_chain()
    tenants = Tenant.objects.filter(id__in=access.tenant_ids()).order_by("slug")
    context = {
        **admin_site.each_context(request),
        "title": _("Answer mode"),
        "rows": [tenant_mode(tenant=t, chain=chain) for t in tenants],
        "problem": problem,
        "operator": access.superuser,
        "extractive": EXTRACTIVE,
    }
    return TemplateResponse(request, "admin/answering/answer_mode.html", context)
