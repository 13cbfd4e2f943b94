"""Every console surface of a tenant model declares its audience rule (issue 45, item 1).

The walk reads the real admin registry, so a surface added tomorrow is checked the day it is
registered. The forced-fail runs plant the mistakes the rule exists for: an admin of a tenant
model that declares nothing, and one that is not tenant-scoped at all."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import RequestFactory

from answering.console.handoff import WebhookDeliveryAdmin
from answering.models import WebhookDelivery
from tenants.admin import TenantScopedAdmin, TenantScopedRecordAdmin
from tenants.models import Tenant
from tenants.surfaces import is_tenant_model, surface_problems


class PlantedDeliveryAdmin(TenantScopedRecordAdmin):
    """The hole of issue 45 as it was: a record admin that says nothing about audiences."""

    list_display = ["id", "event", "payload"]


def test_every_registered_tenant_admin_declares_an_audience_rule() -> None:
    registered = [model for model in admin.site._registry if is_tenant_model(model)]
    # The walk must see the surfaces that hold audience-bound text, or it proves nothing.
    assert {WebhookDelivery, Tenant} <= set(registered) and len(registered) >= 12
    assert surface_problems(admin.site._registry.items()) == []


def test_forced_fail_a_planted_admin_without_a_rule_is_named() -> None:
    site = admin.AdminSite(name="planted")
    site.register(WebhookDelivery, PlantedDeliveryAdmin)
    site.register(Tenant, admin.ModelAdmin)
    problems = surface_problems(site._registry.items())
    assert any("WebhookDelivery" in p and "declares no audience rule" in p for p in problems), problems
    assert any("Tenant" in p and "not a TenantScopedAdmin" in p for p in problems), problems


def test_forced_fail_the_system_check_refuses_a_planted_surface() -> None:
    admin.site.unregister(WebhookDelivery)
    admin.site.register(WebhookDelivery, PlantedDeliveryAdmin)
    try:
        with pytest.raises(SystemCheckError, match="declares no audience rule"):
            call_command("check")
    finally:
        admin.site.unregister(WebhookDelivery)
        admin.site.register(WebhookDelivery, WebhookDeliveryAdmin)
    call_command("check")


def test_a_misspelt_audience_field_is_named() -> None:
    class Misspelt(TenantScopedAdmin):
        audience_field = "audience_slugs"

    site = admin.AdminSite(name="misspelt")
    site.register(WebhookDelivery, Misspelt)
    assert any("names no field" in p for p in surface_problems(site._registry.items()))


@pytest.mark.django_db
def test_an_undeclared_surface_raises_instead_of_listing(django_user_model: Any) -> None:
    request = RequestFactory().get("/admin/")
    request.user = django_user_model.objects.create(username="root", is_staff=True, is_superuser=True)
    planted = PlantedDeliveryAdmin(WebhookDelivery, admin.AdminSite(name="raise"))
    with pytest.raises(ImproperlyConfigured, match="declares no audience rule"):
        planted.get_queryset(request)
