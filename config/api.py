"""The django-ninja API under /api/v1 (routers live in their apps; this module only assembles them)."""

from __future__ import annotations

from ninja import NinjaAPI

api = NinjaAPI(title="Answerdesk API", version="1", urls_namespace="api")
