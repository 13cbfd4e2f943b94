"""The customer chat page, /t/<tenant>/: the page, the question form, the pending ask the
stream claims, the event stream, signed feedback tickets.

May import: answering.pipeline, answering.models, answering.sse, and tenants. Never another
surface (answering.api, answering.console).
"""
