"""python manage.py ask --tenant SLUG [--audience A] "question" """

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from answering.pipeline.config import configuration
from answering.pipeline.flow import answer
from answering.pipeline.limits import QuestionRejected
from tenants.cli import add_reader_arguments, reader_from


class Command(BaseCommand):
    help = "Ask a tenant's answer desk a question and print the answer, its sources and the trace id."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question")
        add_reader_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        tenant, audiences = reader_from(options)
        try:
            result = answer(tenant=tenant, audiences=audiences, question=options["question"], config=configuration())
        except (QuestionRejected, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(result.text)
        if result.sources:
            self.stdout.write("\nSources:")
            for source in result.sources:
                page = f", page {source['page']}" if source["page"] else ""
                self.stdout.write(f"  [{source['number']}] {source['title']} ({source['source_type']}:"
                                  f"{source['slug']}) — {source['heading_path']}{page}")
        if result.escalation_id:
            self.stdout.write(f"\nEscalation #{result.escalation_id} opened for a person to follow up.")
        self.stdout.write(f"\n{result.action}; generator {result.generator or '—'}; trace {result.trace_id or '—'}")
