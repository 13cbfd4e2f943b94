"""Corpus: one Django app, a subpackage per concern (docs/decisions/0096).

ingest/     the flow that writes a tenant's documents: parse → chunk → encode → write
            (flow.py), and the later writes on what it wrote (lifecycle, reembed)
parsers/    one module per file format, each file parsed or failed with a reason
encoders/   the one encoder per process (embedding.py), its runtimes, the token states it stores
language/   the keyword index's keys computed in Python: language keys, the Czech stemmer,
            exact identifiers
sources/    where documents come from besides the command: uploads as jobs, website sync
api/        the documents and jobs endpoints (POST/GET /documents, GET /jobs/{id})
demo/       the demo corpus as data, and its loader
admin.py    documents, uploads and web sources in the console

The flow never imports a source or a surface; a source never imports a surface; language,
encoders and parsers import none of the others (tenants/tests/test_source_lint.py).
"""
