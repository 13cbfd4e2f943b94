"""The front door (`/`): what this server is, and the chat pages its tenants chose to list.

A deployment serving one company sets FRONT_DOOR_TENANT and `/` goes straight to that
tenant's chat. Only tenants marked `listed` appear: an unlisted tenant's name or slug never
reaches a stranger from here (issue 19 item 4).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from tenants.models import Tenant


def listed_tenants() -> list[Tenant]:
    """Tenants a tenant admin marked as listed, by name. tenants_tenant is a reference table
    (no row-level security); the slug's unique index is not needed for a handful of rows."""
    return list(Tenant.objects.filter(listed=True).order_by("name", "slug").only("slug", "name"))


@require_GET
def front_door(request: HttpRequest) -> HttpResponse:
    target: str | None = settings.FRONT_DOOR_TENANT
    if target:
        return HttpResponseRedirect(reverse("chat:page", kwargs={"tenant_slug": target}))
    return render(request, "site/front.html", {"tenants": listed_tenants()})
