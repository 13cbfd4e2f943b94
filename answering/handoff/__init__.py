"""The handoff back to the asker: follow-ups (the opaque page and its thread), notifications
(email to agents and askers, signed webhooks delivered by background tasks), and retention
and erasure of the personal data an escalation holds (docs/decisions/0044, 0045, 0046).

May import: answering.models and the apps below answering (cachelayer, tenants). Never the
pipeline or a surface: the pipeline and the surfaces call into it (tenants/tests/test_source_lint.py).
"""
