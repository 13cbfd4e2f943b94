from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "retrieval"

    def ready(self) -> None:
        from retrieval import checks  # noqa: F401  (registers the system check)
