"""The keyword index's keys computed in Python, written at ingest and computed the same way
from the question (retrieval reads them too).

keys.py         index keys for languages PostgreSQL cannot stem (lemma, stem, folded, prefix)
czech_stem.py   the light Czech stemmer keys.py falls back on
terms.py        exact, unstemmed identifiers (`=max_connections`), in every language

It imports nothing else of corpus (tenants/tests/test_source_lint.py).
"""
