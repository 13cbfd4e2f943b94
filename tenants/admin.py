"""The console's front door. Staff see the rows of their own tenants; superusers see all
tenant metadata. Chunk text is not shown here at all: it is read only through the scope."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest

from tenants import actions
from tenants.models import ApiKey, ApiKeyAudience, Audience, Membership, MembershipAudience, Tenant
from tenants.rls import staff_tenant_ids


class TenantScopedAdmin(admin.ModelAdmin):
    """Rows of the tenants the staff user belongs to, and nothing else."""

    tenant_field = "tenant"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.tenant_field}__in": staff_tenant_ids(request.user)})

    def get_list_filter(self, request: HttpRequest) -> Any:
        # A plain related filter lists every tenant in the database; offer only the tenants
        # the visible rows belong to, so the filter is no directory of other customers.
        return [(f, admin.RelatedOnlyFieldListFilter) if f == self.tenant_field else f
                for f in super().get_list_filter(request)]

    def _get_obj_does_not_exist_redirect(self, request: HttpRequest, opts: Any, object_id: str) -> Any:
        # Another tenant's row (change, history, delete URLs) is a plain 404, the same as a
        # row that never existed: no redirect with a message that confirms the id.
        raise Http404

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if not request.user.is_superuser:
            ids = staff_tenant_ids(request.user)
            if db_field.related_model is Tenant:
                kwargs["queryset"] = Tenant.objects.filter(id__in=ids)
            elif db_field.related_model is Audience:
                kwargs["queryset"] = Audience.objects.filter(tenant_id__in=ids)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Tenant)
class TenantAdmin(TenantScopedAdmin):
    tenant_field = "id"
    list_display = ["slug", "name", "text_search_config", "created_at"]
    search_fields = ["slug", "name"]
    readonly_fields = ["created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def save_model(self, request: HttpRequest, obj: Tenant, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        created = actions.tenant_create(slug=obj.slug, name=obj.name, text_search_config=obj.text_search_config)
        obj.pk = created.pk


@admin.register(Audience)
class AudienceAdmin(TenantScopedAdmin):
    list_display = ["slug", "name", "tenant"]
    list_filter = ["tenant"]
    search_fields = ["slug", "name", "tenant__slug"]


class MembershipAudienceInline(admin.TabularInline):
    model = MembershipAudience
    extra = 0
    fields = ["audience"]


@admin.register(Membership)
class MembershipAdmin(TenantScopedAdmin):
    list_display = ["user", "tenant", "role", "audience_list", "created_at"]
    list_filter = ["tenant", "role"]
    search_fields = ["user__username", "user__email", "tenant__slug"]
    inlines = [MembershipAudienceInline]

    @admin.display(description="Audiences")
    def audience_list(self, obj: Membership) -> str:
        return ", ".join(a.slug for a in obj.audiences.all())

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        for instance in formset.save(commit=False):
            instance.tenant_id = form.instance.tenant_id
            instance.save()
        for obj in formset.deleted_objects:
            obj.delete()


class ApiKeyAudienceInline(admin.TabularInline):
    model = ApiKeyAudience
    extra = 0
    fields = ["audience"]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.related_model is Audience and not request.user.is_superuser:
            kwargs["queryset"] = Audience.objects.filter(tenant_id__in=staff_tenant_ids(request.user))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ApiKeyCreateForm(forms.ModelForm):
    """Creation asks for the audiences up front: a key is usable the moment it is shown."""

    audiences = forms.ModelMultipleChoiceField(
        queryset=Audience.objects.none(), widget=forms.CheckboxSelectMultiple,
        help_text="What the key may read (and upload into). Choose audiences of the key's tenant.")

    class Meta:
        model = ApiKey
        fields = ["tenant", "name", "rate_limit_per_minute"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        tenant, audiences = cleaned.get("tenant"), cleaned.get("audiences")
        if tenant is not None and audiences is not None and any(a.tenant_id != tenant.pk for a in audiences):
            raise forms.ValidationError("Every audience must belong to the key's tenant.")
        return cleaned


@admin.register(ApiKey)
class ApiKeyAdmin(TenantScopedAdmin):
    """Only the hash is stored: the key is shown once, on creation; the prefix identifies it after."""

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
        audiences = Audience.objects.select_related("tenant")
        if not request.user.is_superuser:
            audiences = audiences.filter(tenant_id__in=staff_tenant_ids(request.user))
        form.base_fields["audiences"].queryset = audiences
        return form

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        return list(self.readonly_fields) if obj is not None else []

    def get_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        return list(self.fields) if obj is not None else ["tenant", "name", "audiences", "rate_limit_per_minute"]

    def get_inlines(self, request: HttpRequest, obj: ApiKey | None) -> list[Any]:
        return self.inlines if obj is not None else []

    @admin.display(description="Audiences")
    def audience_list(self, obj: ApiKey) -> str:
        return ", ".join(a.slug for a in obj.audiences.all())

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        issued = actions.api_key_create(
            tenant=obj.tenant, name=obj.name, rate_limit_per_minute=obj.rate_limit_per_minute,
            audience_slugs=[a.slug for a in form.cleaned_data["audiences"]])
        obj.pk = issued.api_key.pk
        obj.prefix = issued.api_key.prefix
        messages.warning(
            request,
            f"New key for {obj.tenant.slug} (copy it now: it is shown once, only its hash is stored): "
            f"{issued.raw_key}",
        )

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        if change:  # on creation api_key_create wrote the audiences; the form has no M2M to save
            super().save_related(request, form, formsets, change)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        for instance in formset.save(commit=False):
            instance.tenant_id = form.instance.tenant_id
            instance.save()
        for obj in formset.deleted_objects:
            obj.delete()

    @admin.action(description="Revoke selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for api_key in queryset:
            actions.api_key_revoke(api_key=api_key)
        self.message_user(request, f"Revoked {queryset.count()} key(s).")
