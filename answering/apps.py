from django.apps import AppConfig


class AnsweringConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "answering"
