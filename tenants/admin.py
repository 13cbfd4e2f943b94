"""The console's front door. Staff see the rows of their own tenants, and of those only the rows
within their audiences (tenants/staff.py); superusers see everything. Chunk text is not shown
here at all: it is read only through the scope.

Roles (docs/decisions/0033): an agent reads and works the escalation queue; a tenant admin
(role `owner`) manages keys, memberships, audiences and documents, and only rows within their
own audiences; platform fields of a tenant belong to superusers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Exists, OuterRef, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from tenants import actions, embed, staff
from tenants.models import ApiKey, ApiKeyAudience, Audience, Membership, MembershipAudience, Tenant
from tenants.staff import StaffAccess, staff_access

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups  # the stub's type of `fields`

# The search configuration and the language decide how every chunk is keyed: changing either
# means re-ingesting, a platform operation.
PLATFORM_FIELDS = ["daily_spend_cap_usd", "text_search_config", "language"]


class TenantScopedAdmin(admin.ModelAdmin):
    """Rows of the tenants the staff user belongs to, within their audiences, and nothing else.

    `audience_field` names where a row keeps the audiences it was read or written with, or
    says there is no such text (staff.NO_AUDIENCE_TEXT); every subclass registered for a
    tenant model must set it (tenants/surfaces.py). `admin_writes` reserves add, change and
    delete for tenant admins."""

    tenant_field = "tenant"
    audience_field: str = staff.UNDECLARED
    audience_key: Literal["id", "slug"] = "id"
    audience_single = False
    admin_writes = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        if self.audience_field == staff.UNDECLARED:
            raise ImproperlyConfigured(f"{type(self).__name__} declares no audience rule (tenants/surfaces.py)")
        queryset = super().get_queryset(request)
        access = staff_access(request)
        if access.superuser:
            return queryset
        queryset = queryset.filter(**{f"{self.tenant_field}__in": access.tenant_ids()})
        if self.audience_field != staff.NO_AUDIENCE_TEXT:
            tenant_id = "id" if self.tenant_field == "id" else f"{self.tenant_field}_id"
            # Through the module, so a forced-fail test that removes the rule removes it everywhere.
            queryset = queryset.filter(staff.within_audiences(
                access, field=self.audience_field, key=self.audience_key, single=self.audience_single,
                tenant_field=tenant_id))
        return queryset

    def get_list_filter(self, request: HttpRequest) -> Any:
        # A plain related filter lists every tenant in the database; offer only the tenants
        # the visible rows belong to, so the filter is no directory of other customers.
        return [(f, admin.RelatedOnlyFieldListFilter) if f == self.tenant_field else f
                for f in super().get_list_filter(request)]

    def _get_obj_does_not_exist_redirect(self, request: HttpRequest, opts: Any, object_id: str) -> Any:
        # Another tenant's (or audience's) row is a plain 404, the same as a row that never
        # existed: no redirect with a message that confirms the id.
        raise Http404

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        access = staff_access(request)
        if not access.superuser:
            tenants = access.admin_tenant_ids() if self.admin_writes else access.tenant_ids()
            if db_field.related_model is Tenant:
                kwargs["queryset"] = Tenant.objects.filter(id__in=tenants)
            elif db_field.related_model is Audience:
                kwargs["queryset"] = Audience.objects.filter(tenant_id__in=tenants,
                                                             id__in=sorted(access.audience_ids()))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    # -- roles ---------------------------------------------------------------------------
    def tenant_of(self, obj: Any) -> int:
        return int(obj.pk if self.tenant_field == "id" else getattr(obj, f"{self.tenant_field}_id"))

    def row_manageable(self, access: StaffAccess, obj: Any) -> bool:
        """Whether a tenant admin may change this row; rows naming audiences say no to outsiders."""
        return True

    def _may_write(self, request: HttpRequest, obj: Any) -> bool:
        if not self.admin_writes:
            return True
        access = staff_access(request)
        if obj is None:
            return bool(access.admin_tenant_ids())
        return access.is_admin(self.tenant_of(obj)) and self.row_manageable(access, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return super().has_add_permission(request, *args) and self._may_write(request, None)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_change_permission(request, obj) and self._may_write(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_delete_permission(request, obj) and self._may_write(request, obj)


class TenantScopedRecordAdmin(TenantScopedAdmin):
    """A record the system writes (deliveries, fetched pages): read in the console, never edited."""

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class TenantAudienceInline(admin.TabularInline):
    """Audience rows of a membership or key: only the parent's tenant's audiences, and for
    anyone but a superuser only those the editor holds (offered and accepted)."""

    extra = 0
    fields = ["audience"]

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        formset = super().get_formset(request, obj, **{**kwargs, "formset": TenantAudienceFormSet})
        access = staff_access(request)
        tenants = [obj.tenant_id] if obj is not None else access.admin_tenant_ids()
        audiences = Audience.objects.filter(tenant_id__in=tenants).select_related("tenant")
        if not access.superuser:
            audiences = audiences.filter(id__in=sorted(access.audience_ids()))
        assert issubclass(formset, TenantAudienceFormSet)  # Django's factory subclasses the formset given
        field = formset.form.base_fields["audience"]
        assert isinstance(field, forms.ModelChoiceField)  # the inline's foreign key
        field.queryset = audiences
        formset.held_audience_ids = None if access.superuser else access.audience_ids()  # a class made per call
        return formset


class TenantAudienceFormSet(forms.BaseInlineFormSet):
    held_audience_ids: frozenset[int] | None = frozenset()  # None: a superuser

    def clean(self) -> None:
        super().clean()
        for form in self.forms:
            audience = (form.cleaned_data or {}).get("audience")
            if audience is None or (form.cleaned_data or {}).get("DELETE"):
                continue
            if audience.tenant_id != self.instance.tenant_id:
                raise forms.ValidationError(_("Audience %(audience)s belongs to another tenant.")
                                            % {"audience": audience.slug})
            if self.held_audience_ids is not None and audience.pk not in self.held_audience_ids:
                raise forms.ValidationError(_("You do not hold the audience %(audience)s.") % {"audience": audience.slug})


def save_tenant_rows(form: Any, formset: Any) -> None:
    for instance in formset.save(commit=False):
        instance.tenant_id = form.instance.tenant_id
        instance.save()
    for obj in formset.deleted_objects:
        obj.delete()


class TenantForm(forms.ModelForm):
    """The tenant change page. The embed secret is never a field (and never listed): it is
    only (re)generated, and shown once, in the message after saving."""

    regenerate_embed_secret = forms.BooleanField(
        required=False, label=gettext_lazy("(Re)generate the embed secret"),
        help_text=gettext_lazy("Your server signs signed-in customers' widget tokens with it (README, Embedding). "
                               "The new secret is shown once, after saving; tokens signed with the old one stop "
                               "working."))

    class Meta:
        model = Tenant
        exclude = ["embed_secret"]
        widgets = {"embed_origins": forms.Textarea(attrs={"rows": 3, "cols": 60})}
        help_texts = {
            "embed_origins": gettext_lazy("Sites that may show the chat widget, one origin per line: "
                                          "scheme://host[:port], e.g. https://help.example.com. Empty: the widget "
                                          "works nowhere."),
            "listed": gettext_lazy("Link this tenant's chat page from the server's front page."),
        }

    def clean_embed_origins(self) -> str:
        try:
            return "\n".join(embed.embed_origins_parse(text=self.cleaned_data.get("embed_origins", "")))
        except embed.OriginInvalid as exc:
            raise forms.ValidationError(str(exc)) from exc


@admin.register(Tenant)
class TenantAdmin(TenantScopedAdmin):
    audience_field = staff.NO_AUDIENCE_TEXT
    tenant_field = "id"
    admin_writes = True
    form = TenantForm
    list_display = ["slug", "name", "listed", "text_search_config", "created_at"]
    search_fields = ["slug", "name"]
    readonly_fields = ["created_at", "embed_snippet", "embed_secret_state"]

    @admin.display(description=gettext_lazy("Embed snippet"))
    def embed_snippet(self, obj: Tenant) -> str:
        if obj.pk is None:
            return "-"
        snippet = (f'<script src="{settings.PUBLIC_BASE_URL.rstrip("/")}/embed.js" '
                   f'data-tenant="{obj.slug}" async></script>')
        return format_html('<textarea readonly rows="2" cols="90" aria-label="{}" class="embed-snippet">'
                           '{}</textarea><div class="help">{}</div>', _("Embed snippet"), snippet,
                           _('Paste it into any page of a site listed under embed origins. For signed-in customers '
                             'add data-token="…" (README, Embedding).'))

    @admin.display(description=gettext_lazy("Embed secret"))
    def embed_secret_state(self, obj: Tenant) -> str:
        return (_("set (hidden; regenerate to replace it)") if obj.embed_secret
                else _("not set: the widget reads public answers only"))

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return request.user.is_superuser

    def get_readonly_fields(self, request: HttpRequest, obj: Tenant | None = None) -> list[str]:
        fields = list(super().get_readonly_fields(request, obj))
        return fields if request.user.is_superuser else fields + PLATFORM_FIELDS

    def save_model(self, request: HttpRequest, obj: Tenant, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            if "language" in form.changed_data:
                # Its vectors (docs/decisions/0112) and keyword keys were made for the old language;
                # nothing here rewrites a corpus behind the operator's back.
                messages.warning(request, _(
                    "The language of %(tenant)s changed: re-encode its pages with `manage.py reembed --tenant "
                    "%(tenant)s` and ingest them again, so its vectors and keyword keys follow the new language.")
                    % {"tenant": obj.slug})
        else:
            created = actions.tenant_create(slug=obj.slug, name=obj.name, text_search_config=obj.text_search_config,
                                             language=obj.language)
            obj.pk = created.pk
        if form.cleaned_data.get("regenerate_embed_secret"):
            secret = embed.embed_secret_rotate(tenant_id=obj.pk)
            messages.warning(request, _("The new embed secret of %(tenant)s, shown this once: %(secret)s")
                             % {"tenant": obj.slug, "secret": secret})


@admin.register(Audience)
class AudienceAdmin(TenantScopedAdmin):
    audience_field = staff.NO_AUDIENCE_TEXT
    admin_writes = True
    list_display = ["slug", "name", "tenant"]
    list_filter = ["tenant"]
    search_fields = ["slug", "name", "tenant__slug"]

    def row_manageable(self, access: StaffAccess, obj: Audience) -> bool:
        return access.holds(obj.tenant_id, [obj.pk])


class MembershipAudienceInline(TenantAudienceInline):
    model = MembershipAudience


class AudienceHolderAdmin(TenantScopedAdmin):
    """A membership or an API key: a row that holds audiences through a table of its own
    (`held_table`, whose `holder_column` names the row). A tenant admin manages it only when
    they hold every audience it holds."""

    admin_writes = True
    # The row names audiences, it quotes nothing read under them; changing it needs them all.
    audience_field = staff.NO_AUDIENCE_TEXT
    held_table: type[MembershipAudience | ApiKeyAudience]
    holder_column: str

    @admin.display(description=gettext_lazy("Audiences"))
    def audience_list(self, obj: Membership | ApiKey) -> str:
        return ", ".join(a.slug for a in obj.audiences.all())

    def row_manageable(self, access: StaffAccess, obj: Membership | ApiKey) -> bool:
        held = self.held_table.objects.filter(**{self.holder_column: obj.pk}).values_list("audience_id", flat=True)
        return access.holds(obj.tenant_id, held)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        save_tenant_rows(form, formset)


@admin.register(Membership)
class MembershipAdmin(AudienceHolderAdmin):
    held_table, holder_column = MembershipAudience, "membership_id"
    list_display = ["user", "tenant", "role", "audience_list", "created_at"]
    list_filter = ["tenant", "role"]
    search_fields = ["user__username", "user__email", "tenant__slug"]
    inlines = [MembershipAudienceInline]


class ApiKeyAudienceInline(TenantAudienceInline):
    model = ApiKeyAudience


class ApiKeyCreateForm(forms.ModelForm):
    """Creation asks for the audiences up front: a key is usable the moment it is shown."""

    audiences = forms.ModelMultipleChoiceField(
        queryset=Audience.objects.none(), widget=forms.CheckboxSelectMultiple,
        label=gettext_lazy("Audiences"),
        help_text=gettext_lazy("What the key may read (and upload into). Choose audiences of the key's tenant that "
                               "you hold."))
    # Set per request on a class made per call (ApiKeyAdmin.get_form), never on this shared one:
    # what is offered, and what is accepted (None: a superuser, who may grant any audience).
    offered_audiences: QuerySet[Audience] = Audience.objects.none()
    held_audience_ids: frozenset[int] | None = frozenset()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["audiences"]
        assert isinstance(field, forms.ModelMultipleChoiceField)  # declared above
        field.queryset = self.offered_audiences

    class Meta:
        model = ApiKey
        fields = ["tenant", "name", "rate_limit_per_minute"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        tenant, audiences = cleaned.get("tenant"), cleaned.get("audiences")
        if tenant is not None and audiences is not None:
            if any(a.tenant_id != tenant.pk for a in audiences):
                raise forms.ValidationError(_("Every audience must belong to the key's tenant."))
            outside = sorted(a.slug for a in audiences if self.held_audience_ids is not None
                             and a.pk not in self.held_audience_ids)
            if outside:
                raise forms.ValidationError(_("You do not hold the audience %(audiences)s: a key can only be given "
                                              "audiences its creator holds.") % {"audiences": ", ".join(outside)})
        return cleaned


@admin.register(ApiKey)
class ApiKeyAdmin(AudienceHolderAdmin):
    """Only the hash is stored: the key is shown once, on the page answering its creation."""

    held_table, holder_column = ApiKeyAudience, "api_key_id"
    list_display = ["prefix", "name", "tenant", "audience_list", "rate_limit_per_minute", "created_at",
                    "last_used_at", "revoked_at"]
    list_filter = ["tenant", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "tenant__slug"]
    fields = ["tenant", "name", "prefix", "rate_limit_per_minute", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["tenant", "prefix", "created_at", "last_used_at", "revoked_at"]
    inlines = [ApiKeyAudienceInline]
    actions = ["revoke"]

    def get_form(self, request: HttpRequest, obj: ApiKey | None = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is not None:
            return super().get_form(request, obj, change=change, **kwargs)
        form = super().get_form(request, obj, change=change, **{**kwargs, "form": ApiKeyCreateForm})
        access = staff_access(request)
        audiences = Audience.objects.select_related("tenant")
        if not access.superuser:
            audiences = audiences.filter(tenant_id__in=access.admin_tenant_ids(), id__in=sorted(access.audience_ids()))
        assert issubclass(form, ApiKeyCreateForm)  # Django's factory subclasses the form given
        form.offered_audiences = audiences  # form is a class made per call
        form.held_audience_ids = None if access.superuser else access.audience_ids()
        return form

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        return list(self.readonly_fields) if obj is not None else []

    def get_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> _FieldGroups:
        return list(self.fields) if obj is not None else ["tenant", "name", "audiences", "rate_limit_per_minute"]

    def get_inlines(self, request: HttpRequest, obj: ApiKey | None) -> list[Any]:
        return self.inlines if obj is not None else []

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        found = super().get_actions(request)
        if not staff_access(request).admin_tenant_ids():
            found.pop("revoke", None)
        return found

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        issued = actions.api_key_create(
            tenant=obj.tenant, name=obj.name, rate_limit_per_minute=obj.rate_limit_per_minute,
            audience_slugs=[a.slug for a in form.cleaned_data["audiences"]])
        obj.pk = issued.api_key.pk
        obj.prefix = issued.api_key.prefix
        # Kept on the request only: the response page shows it, the messages cookie never holds it.
        request._issued_raw_key = issued.raw_key  # type: ignore[attr-defined]  # a per-request slot HttpRequest does not declare

    def response_add(self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None) -> HttpResponse:
        raw_key = getattr(request, "_issued_raw_key", None)
        if raw_key is None:
            return super().response_add(request, obj, post_url_continue)
        context = {**self.admin_site.each_context(request), "title": _("API key created"), "api_key": obj,
                   "raw_key": raw_key, "opts": self.opts,
                   "audiences": [a.slug for a in obj.audiences.all()]}
        response = TemplateResponse(request, "admin/tenants/apikey/created.html", context)
        response["Cache-Control"] = "no-store"
        return response

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        if change:  # on creation api_key_create wrote the audiences; the form has no M2M to save
            super().save_related(request, form, formsets, change)

    @admin.action(description=gettext_lazy("Revoke selected keys"))
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        access = staff_access(request)
        if not access.superuser:
            outside = ApiKeyAudience.objects.filter(api_key_id=OuterRef("pk")).exclude(
                audience_id__in=sorted(access.audience_ids()))
            queryset = queryset.filter(tenant_id__in=access.admin_tenant_ids()).exclude(Exists(outside))
        keys = list(queryset)
        for api_key in keys:
            actions.api_key_revoke(api_key=api_key)
        self.message_user(request, _("Revoked %(count)d key(s).") % {"count": len(keys)})
