"""python manage.py export_encoder [--backend onnx|onnx-int8|all]: make and check the ONNX exports.

`make run` and `make test` call it, so the first request or test does not pay for the export.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.encoders.embedding import model_path
from corpus.encoders import BACKENDS
from corpus.encoders.export import ExportRefused, ensure_export


class Command(BaseCommand):
    help = "Export the bundled model to ONNX (fp32 and int8) into EMBEDDING_EXPORT_DIR and check it."
    requires_system_checks: list[str] = []  # no database needed, nor its checks

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--backend", default="configured", choices=["configured", "all", *BACKENDS],
                            help="which export (default: EMBEDDING_BACKEND's; torch needs none)")

    def handle(self, *args: Any, **options: Any) -> None:
        choice = options["backend"]
        wanted = {"configured": [settings.EMBEDDING_BACKEND], "all": list(BACKENDS)}.get(choice, [choice])
        for backend in wanted:
            if backend == "torch":
                continue
            try:
                directory = ensure_export(backend=backend, model_path=model_path())
            except ExportRefused as exc:
                raise CommandError(str(exc)) from exc
            check = json.loads((directory / "check.json").read_text())
            self.stdout.write(f"{backend}: {directory} (checked on {check['samples']} texts, "
                              f"worst cosine {check['min_cosine']:.4f})")
