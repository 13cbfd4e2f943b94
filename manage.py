#!/usr/bin/env python
"""Django's command-line utility, with the embedded database started first when needed."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if not os.environ.get("DATABASE_URL") and os.environ.get("ANSWERDESK_SKIP_DB_START") != "1":
        # Idempotent and cheap when the server already runs; see config/embedded_db.py.
        from config.embedded_db import ensure_running

        ensure_running()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
