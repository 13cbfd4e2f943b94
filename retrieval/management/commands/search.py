"""python manage.py search --tenant SLUG [--audience A] [--explain] "query" """

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.encoders.embedding import identity_for
from retrieval.config import RetrievalConfig
from retrieval.search import MODES, RERANK_MODES, search
from tenants.cli import add_reader_arguments, reader_from
from tenants.readers import reader_scope


class Command(BaseCommand):
    help = "Search a tenant's corpus as a given audience and show the fused ranking."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("query")
        add_reader_arguments(parser)
        parser.add_argument("--k", type=int, default=5)
        parser.add_argument("--mode", choices=MODES, help="default: hybrid, or keyword in a language the encoder does not read")
        parser.add_argument("--rerank", choices=RERANK_MODES)
        parser.add_argument("--explain", action="store_true", help="legs, scores, corrections, verdicts, timings")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant, audiences = reader_from(options)
        try:
            scope = reader_scope(tenant=tenant, audiences=audiences)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        result = search(scope=scope, query=options["query"], ts_config=tenant.text_search_config,
                        k=options["k"], mode=options["mode"], rerank=options["rerank"], language=tenant.language,
                        config=RetrievalConfig.from_settings())
        if not result.candidates:
            self.stdout.write("No chunk came back: nothing relevant in this corpus.")
        for position, c in enumerate(result.candidates, start=1):
            self.stdout.write(f"{position:>2}. [{c.source_type}] {c.slug} — {c.heading_path}")
            if options["explain"]:
                legs = ", ".join(f"{leg} #{rank}" for leg, rank in sorted(c.ranks.items()))
                rerank = f" rerank logit {c.rerank_logit:.3f} p {c.rerank_probability:.3f}" if c.rerank_logit is not None else ""
                self.stdout.write(f"    fused {c.fused_score:.5f} ({legs}); cosine {c.vector_similarity:.3f}; "
                                  f"keyword coverage {c.keyword_coverage:.2f} {c.matched_terms}; evidence {c.evidence}{rerank}")
        if options["explain"]:
            self.stdout.write(f"\nterms: {list(result.terms.lexemes)} exact: {list(result.terms.exact)}")
            for fix in result.corrections:
                self.stdout.write(f"{fix.kind}: {fix.original} → {fix.corrected} (similarity {fix.similarity})")
            self.stdout.write(f"chance cosine in this scope {result.chance:.3f}; best cosine above it "
                              f"{result.vector_margin:.3f}; question coverage {result.query_coverage:.2f}")
            rerank_ms = result.timings_ms.get("rerank", 0.0)
            self.stdout.write(f"rerank: {result.rerank_reason} ({rerank_ms} ms; question and candidates in one "
                              f"call to encoder {identity_for(tenant.language)})")
            self.stdout.write("timings ms: " + ", ".join(f"{k} {v}" for k, v in result.timings_ms.items()))
