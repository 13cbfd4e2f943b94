"""The ingest flow: files → parsed documents → chunks → vectors → one transaction per window.

flow.py         ingest_paths, the one entry every source calls (command, upload job, website
                sync, an escalation's resolution, the demo loader): collect, parse, plan, encode, write
sitebuild.py    what in a folder is not a page (a generated site's assets), skipped with its reason
manifest.py     answerdesk-manifest.yaml: conflicts no single document states
chunking.py     token-budgeted chunks of whole sentences, the heading path prepended
contextual.py   the provider-free contextualizer (CORPUS_CONTEXTUALIZER)
store.py        the write: documents and chunks, each document all or nothing (DocumentWrite)
origin.py       how a run's documents arrived, recorded on each
rights.py       who writes (Writer): the audiences an ingest may write into
hooks.py        after-commit notification of chunks that stopped being live
lifecycle.py    a document's life after ingest: archive, restore, delete, and the listings
reembed.py      re-encode a tenant's stored chunks when the encoder changes

It reads files, parsers, encoders and language keys; it never imports corpus.sources or
corpus.api (tenants/tests/test_source_lint.py).
"""
