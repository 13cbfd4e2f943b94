"""The answer pipeline and its stages: from a question to a stored trace (flow.py reads top to bottom).

Stages: greetings, rewriting, the confidence gate, generation by a model (llm.py) or the
extractive answerer, citations, traces and escalations (records.py), and the model calls
other apps plug in by dotted path (relevance.py for the `llm` reranker, contextualize.py for
ingest).

May import: answering.models, answering.providers, and the apps below answering (retrieval,
cachelayer, corpus, tenants). Never a surface: answering.api, answering.chat, answering.console
(tenants/tests/test_source_lint.py).
"""
