from django.apps import AppConfig


class CachelayerConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "cachelayer"
