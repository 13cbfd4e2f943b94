from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class TenantsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "tenants"
    verbose_name = gettext_lazy("Tenants")  # the console's heading of the app's models

    def ready(self) -> None:
        from tenants import surfaces  # noqa: F401  (registers the console-surface check)
