from django.apps import AppConfig


class ProjectConfig(AppConfig):
    """The project package as an app, so that its system checks are registered (config/checks.py)."""

    name = "config"
    label = "answerdesk_config"
    verbose_name = "Answerdesk configuration"

    def ready(self) -> None:
        from config import checks  # noqa: F401  (registers the system checks)
        from config.sqlrecorder import install_from_environment

        # A process the test suite started records the statements it sends (config/statement_check.py).
        install_from_environment()
