"""Tenants, audiences, memberships and API keys.

The tables are created by raw SQL in migrations/ (docs/decisions/0003-raw-sql-migrations.md);
these models mirror them (`managed = False`) so the ORM and the admin can use them.
Writes live in tenants/actions.py, never in save() or signals.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Mirror(models.Model):
    """A model over a table that raw SQL in migrations/ creates: Django never creates or alters
    it, and tenants/tests/test_schema.py holds every field to its column (docs/decisions/0039)."""

    class Meta:
        abstract = True
        managed = False


class LogMirror(Mirror):
    """A mirrored log (traces, escalations, ingest jobs, eval runs): stamped rows, newest first."""

    created_at = models.DateTimeField(auto_now_add=True)

    class Meta(Mirror.Meta):
        abstract = True
        ordering = ["-created_at"]


class Tenant(Mirror):
    slug = models.SlugField(max_length=63, unique=True)
    name = models.CharField(max_length=200)
    # A PostgreSQL text search configuration name (english, simple, german, ...).
    text_search_config = models.CharField(max_length=63, default="english")
    # The language of its documents and its chat page (en, cs, …), a code as typed: no choices,
    # so a language with a PostgreSQL configuration keeps working. For a keyed language (cs, sk:
    # corpus/language/keys.py KEYED_LANGUAGES) ingest and questions compute keys in Python, and
    # the keyword index never reads text_search_config (docs/decisions/0125).
    language = models.CharField(max_length=16, default="en")
    # NULL: the ANSWER_DAILY_SPEND_CAP_USD setting (answering/providers/spend.py).
    daily_spend_cap_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    # Linked from the front door (`/`).
    listed = models.BooleanField(default=False)
    # Origins allowed to frame the embedded chat, one per line; empty: none (decision 0054).
    embed_origins = models.TextField(blank=True, default="")
    # Signs a signed-in customer's embed token; empty: the embedded chat reads the public audience.
    embed_secret = models.CharField(max_length=128, blank=True, default="")
    # Set on an evaluation shadow (evaluation.shadow): the tenant whose documents it copies under
    # an arm's settings. `reembed --all` leaves it alone (docs/decisions/0070).
    shadow_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="shadows")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta(Mirror.Meta):
        db_table = "tenants_tenant"
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Audience(Mirror):
    """Who may read a document: every document has one, every reader has a set."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="audiences")
    slug = models.SlugField(max_length=63)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta(Mirror.Meta):
        db_table = "tenants_audience"
        ordering = ["tenant__slug", "slug"]
        constraints = [models.UniqueConstraint(fields=["tenant", "slug"], name="tenants_audience_tenant_slug_uniq")]

    def __str__(self) -> str:
        return f"{self.tenant.slug}/{self.slug}"


class Membership(Mirror):
    """A staff user's place in one tenant: a role, and the audiences whose documents they
    may read and write (tenants/staff.py). A user may hold memberships in several
    tenants; the admin shows each only its own."""

    class Role(models.TextChoices):
        OWNER = "owner", "Tenant admin"
        AGENT = "agent", "Support agent"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.AGENT)
    audiences = models.ManyToManyField(Audience, through="MembershipAudience", related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta(Mirror.Meta):
        db_table = "tenants_membership"
        constraints = [models.UniqueConstraint(fields=["tenant", "user"], name="tenants_membership_tenant_user_uniq")]

    def __str__(self) -> str:
        return f"{self.user} @ {self.tenant.slug} ({self.role})"


class ApiKey(Mirror):
    """A per-tenant key. Only a hash is stored; the prefix identifies it in lists and logs."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=128)
    audiences = models.ManyToManyField(Audience, through="ApiKeyAudience", related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Requests per minute; NULL: the API_RATE_LIMIT_PER_KEY setting, 0: unlimited (tenants/apikeys.py).
    rate_limit_per_minute = models.PositiveIntegerField(null=True, blank=True)

    class Meta(Mirror.Meta):
        db_table = "tenants_apikey"
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"


class HeldAudience(Mirror):
    """One audience a membership or an API key holds (the table's composite keys keep both in
    one tenant)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    audience = models.ForeignKey(Audience, on_delete=models.CASCADE)

    class Meta(Mirror.Meta):
        abstract = True


class MembershipAudience(HeldAudience):
    membership = models.ForeignKey(Membership, on_delete=models.CASCADE)

    class Meta(HeldAudience.Meta):
        db_table = "tenants_membership_audience"


class ApiKeyAudience(HeldAudience):
    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE)

    class Meta(HeldAudience.Meta):
        db_table = "tenants_apikey_audience"
