from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class AnsweringConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "answering"
    verbose_name = gettext_lazy("Answering")  # the console's heading of the app's models
