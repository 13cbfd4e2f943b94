"""The HTTP API surfaces: REST (rest.py: /ask, /feedback) and the OpenAI-compatible endpoint
(openai_chat.py, with its message parsing and documented schemas).

May import: answering.pipeline, answering.providers, answering.models, answering.sse, and
tenants. Never another surface (answering.chat, answering.console).
"""
