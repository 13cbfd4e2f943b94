"""What a staff member may see and do in the console, in one place (docs/decisions/0033).

A member holds, per tenant, a role and a set of audiences (their membership's; a superuser
holds every audience of every tenant and the platform role). A console row is visible when
its audience set lies within the member's audiences of the row's tenant (`row_visible`);
`within_audiences` is the same rule as a queryset filter, so lists, searches, change pages,
buttons and actions all read through a WHERE clause and never filter fetched rows in Python.

Roles: an agent works the escalation queue and reads; a tenant admin (role `owner`) also
manages keys, memberships, documents, uploads and the cache; only a superuser edits platform
fields (a tenant's daily spend cap and text-search configuration).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from django.db.models import F, Q

from tenants.models import Audience, Membership, MembershipAudience, Tenant

SUPERUSER = "superuser"
ADMIN_ROLES = frozenset({Membership.Role.OWNER.value, SUPERUSER})
# The row reads with every audience of its tenant (eval runs: the golden set's judge and
# locators read all audiences), so only a member holding every audience sees it.
EVERY_AUDIENCE = "__every_audience__"
# The row holds no text read or written under an audience (tenants/surfaces.py): no filter.
NO_AUDIENCE_TEXT = "__no_audience_text__"
# What a console surface that said nothing holds: its queryset raises (tenants/surfaces.py).
UNDECLARED = "__undeclared__"
_CACHE_ATTR = "_answerdesk_staff_access"


def row_visible(audiences_of_row: Iterable[Hashable], member_audiences: Iterable[Hashable]) -> bool:
    """A row is visible when every audience it was read or written with is one the member holds."""
    return set(audiences_of_row) <= set(member_audiences)


@dataclass(frozen=True)
class TenantGrant:
    tenant_id: int
    role: str
    audience_ids: frozenset[int]
    audience_slugs: frozenset[str]
    every_audience: bool

    @property
    def is_admin(self) -> bool:
        return self.role in ADMIN_ROLES


@dataclass(frozen=True)
class StaffAccess:
    superuser: bool
    grants: Mapping[int, TenantGrant]

    def grant(self, tenant_id: int | None) -> TenantGrant | None:
        return self.grants.get(int(tenant_id)) if tenant_id is not None else None

    def tenant_ids(self) -> list[int]:
        return sorted(self.grants)

    def admin_tenant_ids(self) -> list[int]:
        return sorted(t for t, g in self.grants.items() if g.is_admin)

    def is_admin(self, tenant_id: int | None) -> bool:
        grant = self.grant(tenant_id)
        return grant is not None and grant.is_admin

    def audience_ids(self, tenant_id: int | None = None) -> frozenset[int]:
        """Held audience ids of one tenant, or of every tenant (ids are unique across tenants)."""
        if tenant_id is not None:
            grant = self.grant(tenant_id)
            return grant.audience_ids if grant else frozenset()
        return frozenset().union(*(g.audience_ids for g in self.grants.values()))

    def audience_slugs(self, tenant_id: int) -> frozenset[str]:
        grant = self.grant(tenant_id)
        return grant.audience_slugs if grant else frozenset()

    def holds(self, tenant_id: int | None, audience_ids: Iterable[int]) -> bool:
        return self.grant(tenant_id) is not None and row_visible(audience_ids, self.audience_ids(tenant_id))

    def slugs_by_tenant(self) -> dict[int, list[str]] | None:
        """For raw SQL: the member's audience slugs per tenant, None for a superuser (no filter)."""
        if self.superuser:
            return None
        return {t: sorted(g.audience_slugs) for t, g in self.grants.items()}


def _load(user: Any) -> StaffAccess:
    tenant_audiences: dict[int, dict[int, str]] = defaultdict(dict)
    if user.is_superuser:
        tenant_audiences.update({t: {} for t in Tenant.objects.values_list("id", flat=True)})
        for audience_id, tenant_id, slug in Audience.objects.values_list("id", "tenant_id", "slug"):
            tenant_audiences[tenant_id][audience_id] = slug
        grants = {t: TenantGrant(t, SUPERUSER, frozenset(a), frozenset(a.values()), True)
                  for t, a in tenant_audiences.items()}
        return StaffAccess(superuser=True, grants=grants)
    roles = dict(Membership.objects.filter(user=user).values_list("tenant_id", "role"))
    held: dict[int, dict[int, str]] = defaultdict(dict)
    for tenant_id, audience_id, slug in MembershipAudience.objects.filter(
            # An audience counts only for its own tenant, whatever a stray row says.
            membership__user=user, audience__tenant_id=F("tenant_id")).values_list(
            "tenant_id", "audience_id", "audience__slug"):
        held[tenant_id][audience_id] = slug
    for audience_id, tenant_id in Audience.objects.filter(tenant_id__in=list(roles)).values_list("id", "tenant_id"):
        tenant_audiences[tenant_id][audience_id] = ""
    grants = {t: TenantGrant(t, role, frozenset(held[t]), frozenset(held[t].values()),
                             row_visible(tenant_audiences[t], held[t]))
              for t, role in roles.items()}
    return StaffAccess(superuser=False, grants=grants)


def member_audience_slugs(*, user: Any, tenant_id: int) -> list[str]:
    """The audiences a user holds in one tenant outside a request (a superuser: every one)."""
    return sorted(_load(user).audience_slugs(tenant_id))


def staff_access(request: Any) -> StaffAccess:
    """The signed-in member's access, read once per request (three small queries)."""
    cached = getattr(request, _CACHE_ATTR, None)
    if cached is None:
        cached = _load(request.user)
        setattr(request, _CACHE_ATTR, cached)
    return cached


def within_audiences(access: StaffAccess, *, field: str, key: Literal["id", "slug"] = "id",
                     single: bool = False, tenant_field: str = "tenant_id") -> Q:
    """`row_visible` as a queryset filter over the member's tenants.

    `field` holds the row's audiences: a set (JSON list of slugs, array of ids; compared with
    `<@`), a single audience (`single`; compared with IN), or EVERY_AUDIENCE for rows read with
    all of the tenant's audiences."""
    if access.superuser:
        return Q()
    visible = Q(pk__in=[])
    for grant in access.grants.values():
        if field == EVERY_AUDIENCE:
            if grant.every_audience:
                visible |= Q(**{tenant_field: grant.tenant_id})
            continue
        held: Collection[Any] = sorted(grant.audience_slugs if key == "slug" else grant.audience_ids)
        visible |= Q(**{tenant_field: grant.tenant_id, f"{field}__{'in' if single else 'contained_by'}": list(held)})
    return visible
