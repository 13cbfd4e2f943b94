"""Cache entries, mirrored for the admin (list, purge). Reads for serving go through
cachelayer.service with the asker's RLS context."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from tenants.models import Tenant


class CacheEntry(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    audience_ids = ArrayField(models.BigIntegerField())
    generator_key = models.CharField(max_length=300)
    query_norm = models.TextField()
    has_identifier = models.BooleanField()
    answer = models.TextField()
    sources = models.JSONField(default=list)
    conflict = models.BooleanField(default=False)
    generator = models.CharField(max_length=200, blank=True)
    provider = models.CharField(max_length=200, blank=True)
    model = models.CharField(max_length=200, blank=True)
    original_trace_id = models.BigIntegerField(null=True)
    original_cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    hits = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    last_hit_at = models.DateTimeField(null=True)
    expires_at = models.DateTimeField()

    class Meta:
        managed = False
        db_table = "cachelayer_entry"
        ordering = ["-created_at"]
        verbose_name_plural = "cache entries"

    def __str__(self) -> str:
        return f"{self.query_norm[:60]} ({self.hits} hits)"
