"""python manage.py handoff_housekeeping [--schedule]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from answering.handoff.housekeeping import housekeeping_run, housekeeping_schedule


class Command(BaseCommand):
    help = ("Retention, the agents' digest and due webhook retries for every tenant: one round now, or with "
            "--schedule the hourly background task (the worker runs it).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--schedule", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["schedule"]:
            scheduled = housekeeping_schedule()
            self.stdout.write("Housekeeping queued for the worker." if scheduled else
                              "This task backend cannot run tasks later; run this command from cron instead.")
            return
        self.stdout.write(json.dumps(housekeeping_run(), indent=2, default=str))
