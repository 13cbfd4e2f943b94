from __future__ import annotations

from django.db import models

from tenants.models import LogMirror, Tenant


class EvalRun(LogMirror):
    """One `manage.py eval` run: the whole report, arms side by side."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    golden = models.CharField(max_length=500)
    arms = models.JSONField(default=list)
    report = models.JSONField()

    class Meta(LogMirror.Meta):
        db_table = "evaluation_run"

    def __str__(self) -> str:
        return f"eval #{self.pk} {self.golden} ({', '.join(self.arms)})"
