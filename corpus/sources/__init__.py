"""Where documents come from besides `manage.py ingest`: each source hands its files to the
one ingest flow (corpus.ingest.flow.ingest_paths) with its writer and origin.

jobs.py     uploads from the admin or the API, run as background ingest jobs
websync/    websites synced by crawl or sitemap (fetch, budget, crawl, sync, storing, tasks)

A source never imports corpus.api (tenants/tests/test_source_lint.py).
"""
