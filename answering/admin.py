"""Django's admin autodiscovery imports `<app>.admin`; the console's admin lives in answering/console/admin.py."""

from answering.console import admin as console_admin  # noqa: F401 - registers EscalationAdmin and TraceAdmin
from answering.console import handoff as console_handoff  # noqa: F401 - webhook deliveries, handoff settings
