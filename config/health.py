"""GET /health: is the database reachable, which versions serve, which model embeds."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.db.utils import DatabaseError, InterfaceError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from corpus.encoders.embedding import SCHEMA_DIMENSION


def _database_status() -> dict[str, object]:
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('server_version'),"
                " (SELECT extversion FROM pg_extension WHERE extname = 'vector'),"
                " (SELECT extversion FROM pg_extension WHERE extname = 'pg_trgm')"
            )
            server_version, vector_version, trgm_version = cursor.fetchone()
    except (DatabaseError, InterfaceError) as exc:
        # A dead connection must not stick around: the next request reconnects by itself.
        connection.close_if_unusable_or_obsolete()
        return {"reachable": False, "error": exc.__class__.__name__}
    return {
        "reachable": True,
        "server_version": server_version,
        "pgvector_version": vector_version,
        "pg_trgm_version": trgm_version,
    }


def health_body() -> tuple[dict[str, object], bool]:
    """The status document and whether it is healthy (also served as /api/v1/health)."""
    database = _database_status()
    healthy = bool(database["reachable"]) and database.get("pgvector_version") is not None
    body: dict[str, object] = {
        "status": "ok" if healthy else "unavailable",
        "database": database,
        "embedding": {
            "model": settings.EMBEDDING_MODEL_NAME,
            "dimension": SCHEMA_DIMENSION,
        },
    }
    return body, healthy


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    body, healthy = health_body()
    return JsonResponse(body, status=200 if healthy else 503)
