"""Foreign keys between two tenant tables whose joins pair `tenant_id` too (docs/decisions/0121).

Django joins a foreign key on the key column alone (`escalation.trace_id = trace.id`). On Citus a
join between two distributed tables must also equate their distribution columns, or it is
refused (or repartitioned) once it spans shards, and a router query cannot prove both sides sit
on one shard. These fields add `target.tenant_id = source.tenant_id` to every JOIN … ON that
Django builds over them, forward and reverse (`select_related`, lookups across the relation, the
admin's lists). The database's own foreign keys already hold `(tenant_id, id)`
(docs/decisions/0048); the column and the migrations are unchanged, so `deconstruct` reports
Django's own class.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models.expressions import Col
from django.db.models.lookups import Exact
from django.db.models.sql.where import AND, WhereNode


class _PairsTenant:
    """Mixin for ForeignKey / OneToOneField between two models that both have a `tenant` key."""

    def get_extra_restriction(self, alias: str, related_alias: str) -> WhereNode | None:
        # Django calls this with the target model's alias first, for reverse joins too.
        field: Any = self
        target = field.remote_field.model._meta.get_field("tenant")
        source = field.model._meta.get_field("tenant")
        condition: list[Any] = [Exact(Col(alias, target), Col(related_alias, source))]
        return WhereNode(condition, connector=AND)


class TenantForeignKey(_PairsTenant, models.ForeignKey):
    def deconstruct(self) -> Any:
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.ForeignKey", args, kwargs


class TenantOneToOneField(_PairsTenant, models.OneToOneField):
    def deconstruct(self) -> Any:
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.OneToOneField", args, kwargs
