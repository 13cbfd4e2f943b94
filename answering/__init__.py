"""Answering: one Django app, a subpackage per concern.

pipeline/   the answer flow and its stages (no surface imports)
providers/  model providers over httpx and the per-tenant spend meter
api/        REST /ask and the OpenAI-compatible endpoint
chat/       the customer chat page and its event stream
console/    the operations console in the admin (escalations, traces, triage, dashboard)
sse.py      server-sent events on the wire, shared by the two streaming surfaces (api, chat)

Surfaces (api, chat, console) import the pipeline, never each other; the pipeline never
imports a surface (tenants/tests/test_source_lint.py).
"""
