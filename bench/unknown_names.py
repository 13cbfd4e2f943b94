"""Which questions of a golden set name something the asker's corpus never mentions?

For every case: the lexemes of its words written as names (retrieval.querytext.written_names)
and, of those, the ones no visible chunk contains, with the vocabulary's nearest term (what
typo correction would have turned it into). The evidence behind docs/decisions/0051: run it on
a new set before trusting the unknown-name rule there.

    python bench/unknown_names.py djangodocs-dev:djangodocs demo-paylane:paylane
"""

from __future__ import annotations

import sys

from harness import ROOT, start_django


def main(specs: list[str]) -> None:
    start_django(own_database=False, migrate=False)
    from evaluation.golden import load_golden
    from retrieval.legs import bm25_stats, name_lexemes
    from tenants.models import Tenant
    from tenants.readers import reader_scope

    for spec in specs:
        name, slug = spec.split(":", 1)
        golden = load_golden(ROOT / "evaluation" / "golden" / f"{name}.yaml")
        tenant = Tenant.objects.get(slug=slug)
        scope = reader_scope(tenant=tenant, audiences=[golden.audience])
        flagged = 0
        for case in golden.cases:
            if case.type in ("tenant_probe", "audience_probe"):
                continue
            names = sorted(name_lexemes(case.question, ts_config=tenant.text_search_config))
            df = bm25_stats(scope, tuple(names)).df if names else {}
            unknown = [(n, scope.similar_terms(n, limit=1, threshold=0.3)[:1]) for n in names if not df.get(n)]
            if unknown:
                flagged += 1
                print(f"{name} {case.id} ({case.type}): {unknown}")
        print(f"{name}: {flagged} of {len(golden.cases)} cases name something the corpus lacks\n")


if __name__ == "__main__":
    main(sys.argv[1:])
