"""Django's admin autodiscovery imports `<app>.admin`; the console's admin lives in answering/console/admin.py."""

from answering.console import admin as console_admin  # noqa: F401 - registers EscalationAdmin and TraceAdmin
