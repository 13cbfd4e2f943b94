"""Every console surface of a tenant model says how its rows are filtered by audience.

A surface that forgets the rule shows every audience's rows to every member of the tenant
(the webhook deliveries did, issue 45). So the rule is part of registering a surface: an admin
of a tenant model (the tenant itself, or a model with a `tenant` foreign key) must be a
`TenantScopedAdmin` and set `audience_field` to one of

- a field path holding the row's audiences (JSON list of slugs, array of ids, or one
  audience with `audience_single`), compared with the member's audiences in SQL;
- `EVERY_AUDIENCE`: the row was read with all of the tenant's audiences (eval runs);
- `NO_AUDIENCE_TEXT`: the row holds no text read or written under an audience (the tenant,
  its audiences, memberships, keys, handoff settings), said out loud rather than by omission.

An undeclared surface fails `manage.py check` (and so the server's start and the test run),
and its queryset raises instead of listing rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib import admin
from django.core.checks import CheckMessage, Error, register
from django.db import models

from tenants.models import Tenant
from tenants.staff import EVERY_AUDIENCE, NO_AUDIENCE_TEXT, UNDECLARED

__all__ = ["EVERY_AUDIENCE", "NO_AUDIENCE_TEXT", "UNDECLARED", "is_tenant_model", "surface_problems"]
TAG = "console_audiences"


def is_tenant_model(model: type[models.Model]) -> bool:
    """The tenant itself, or a model whose rows belong to one tenant."""
    if model is Tenant:
        return True
    try:
        field = model._meta.get_field("tenant")
    except Exception:  # FieldDoesNotExist: not a tenant's row
        return False
    return bool(field.is_relation and field.related_model is Tenant)


def surface_problems(registry: Iterable[tuple[type[models.Model], Any]]) -> list[str]:
    """Why each registered admin of a tenant model would show rows outside a member's audiences."""
    from tenants.admin import TenantScopedAdmin  # the admin module imports this one's sentinels

    problems = []
    for model, model_admin in registry:
        if not is_tenant_model(model):
            continue
        name = f"{model._meta.label} ({type(model_admin).__name__})"
        if not isinstance(model_admin, TenantScopedAdmin):
            problems.append(f"{name} is not a TenantScopedAdmin: it lists every tenant's rows")
        elif model_admin.audience_field == UNDECLARED:
            problems.append(f"{name} declares no audience rule (audience_field)")
        elif model_admin.audience_field not in (EVERY_AUDIENCE, NO_AUDIENCE_TEXT):
            _check_field(model, model_admin.audience_field, name, problems)
    return problems


def _check_field(model: type[models.Model], path: str, name: str, problems: list[str]) -> None:
    current: Any = model
    for part in path.split("__"):
        try:
            field = current._meta.get_field(part)
        except Exception:
            problems.append(f"{name}: audience_field {path!r} names no field of {model._meta.label}")
            return
        current = field.related_model if field.is_relation else None
        if current is None:
            return


@register(TAG)
def check_console_surfaces(app_configs: Sequence[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    return [Error(problem, hint="Set audience_field on the admin (tenants/surfaces.py says which values).",
                  id="answerdesk.E045") for problem in surface_problems(admin.site._registry.items())]
