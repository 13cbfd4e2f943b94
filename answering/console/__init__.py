"""The operations console inside the Django admin: escalation queue and its writes, the trace
viewer with feedback triage, the dashboard (SQL numbers, SVG charts), console fragments.

May import: answering.pipeline, answering.models, and the apps below answering (corpus for
ticket documents, tenants for staff access). Never another surface (answering.api, answering.chat).
"""
