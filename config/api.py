"""The django-ninja APIs under /api/v1: key authentication, limits and JSON errors.

Routers live in their apps; this module assembles them. Two NinjaAPI instances share the
authentication and the limits and differ in their error shape: the native API answers
`{"error": {"code", "message"}}`, the OpenAI-compatible one (`/api/v1/openai/`) answers
OpenAI's `{"error": {"message", "type", "param", "code"}}` so its SDKs raise the right
exception classes (docs/decisions/0014-api-shape.md).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation, TooManyFieldsSent, TooManyFilesSent
from django.db import OperationalError as DatabaseUnavailable
from django.db import InterfaceError as DatabaseConnectionLost
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from ninja import NinjaAPI, Router
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.security import APIKeyHeader, HttpBearer

from answering.api.rest import router as answers_router
from answering.api.openai_chat import router as openai_router
from config.health import health_body
from corpus.api.uploads import router as documents_router
from tenants.apierrors import ApiError, NotFound, RateLimited, UnsupportedMediaType
from tenants.apikeys import KeyPrincipal, address_rate_limit, api_key_authenticate, key_rate_limit
from tenants.ratelimit import client_address

log = logging.getLogger(__name__)
# Seconds a client is asked to wait when the database is unreachable; reconnecting is per request.
_DATABASE_RETRY_AFTER = 5
_TOO_LONG = {"string_too_long", "too_long", "bytes_too_long"}


class JsonOnlyParser(Parser):
    """JSON bodies must say so; anything else is a 415, not a guess."""

    def parse_body(self, request: HttpRequest) -> Any:
        content_type = (request.content_type or "").lower()
        if content_type != "application/json" and not content_type.endswith("+json"):
            raise UnsupportedMediaType(f"send the body as application/json, not {content_type or 'nothing'}")
        return json.loads(request.body)


def _principal(request: HttpRequest, raw_key: str | None) -> KeyPrincipal | None:
    # The address limit runs before the key is checked: it is what makes guessing keys slow.
    if not getattr(request, "_answerdesk_address_counted", False):
        request._answerdesk_address_counted = True  # type: ignore[attr-defined]  # a per-request mark HttpRequest does not declare
        decision = address_rate_limit(address=client_address(request))
        if not decision.allowed:
            raise RateLimited(retry_after=decision.retry_after, scope="client address")
    if not raw_key:
        return None
    principal = api_key_authenticate(raw_key=raw_key)
    if principal is None:
        return None
    decision = key_rate_limit(principal=principal)
    if not decision.allowed:
        raise RateLimited(retry_after=decision.retry_after, scope="API key")
    return principal


class BearerKey(HttpBearer):
    """`Authorization: Bearer <key>` (what OpenAI clients send)."""

    def authenticate(self, request: HttpRequest, token: str) -> KeyPrincipal | None:
        return _principal(request, token.strip() or None)


class HeaderKey(APIKeyHeader):
    """`X-API-Key: <key>`. Listed second, so it also counts requests that carry no key at all."""

    param_name = "X-API-Key"

    def authenticate(self, request: HttpRequest, key: str | None) -> KeyPrincipal | None:
        return _principal(request, (key or "").strip() or None)


@dataclass(frozen=True)
class ErrorInfo:
    status: int
    code: str
    message: str
    retry_after: int | None = None


_STATUS_CODES = {400: "bad_request", 401: "invalid_api_key", 403: "forbidden", 404: "not_found",
                 405: "method_not_allowed", 413: "payload_too_large", 415: "unsupported_media_type",
                 422: "invalid_request", 429: "rate_limited"}


def classify(exc: Exception) -> ErrorInfo:
    """Every exception an endpoint can raise, as a status and a stable code; never a traceback."""
    if isinstance(exc, RateLimited):
        return ErrorInfo(429, exc.code, exc.message, exc.retry_after)
    if isinstance(exc, ApiError):
        return ErrorInfo(exc.status, exc.code, exc.message)
    if isinstance(exc, AuthenticationError):
        return ErrorInfo(401, "invalid_api_key", "a valid API key is required (Authorization: Bearer <key>)")
    if isinstance(exc, ValidationError):
        return _validation(exc)
    if isinstance(exc, HttpError):
        cause = exc.__cause__
        if isinstance(cause, ApiError):
            return classify(cause)
        if isinstance(cause, (json.JSONDecodeError, UnicodeDecodeError)):
            return ErrorInfo(400, "invalid_json", f"the body is not valid JSON: {cause}")
        return ErrorInfo(exc.status_code, _STATUS_CODES.get(exc.status_code, "error"), str(exc))
    if isinstance(exc, Http404):
        return ErrorInfo(404, "not_found", "not found")
    if isinstance(exc, (RequestDataTooBig, TooManyFilesSent, TooManyFieldsSent)):
        return ErrorInfo(413, "payload_too_large", str(exc) or "the request is too large")
    if isinstance(exc, SuspiciousOperation):
        return ErrorInfo(400, "bad_request", "the request was malformed")
    if isinstance(exc, MultiPartParserError):
        # e.g. multipart/form-data without a boundary (found by schemathesis; it was a 500).
        return ErrorInfo(400, "bad_request", f"the multipart body is malformed: {exc}")
    if isinstance(exc, (DatabaseUnavailable, DatabaseConnectionLost)):
        # Down or restarting: a retryable 503, not a 500 that reads like a bug in the request.
        log.warning("database unavailable: %s", exc.__class__.__name__)
        return ErrorInfo(503, "service_unavailable", "the database is unreachable; retry shortly",
                         _DATABASE_RETRY_AFTER)
    log.exception("unhandled API error", exc_info=exc)
    return ErrorInfo(500, "internal_error", "something went wrong on our side")


def _validation(exc: ValidationError) -> ErrorInfo:
    def where(error: dict[str, Any]) -> str:
        return ".".join(str(p) for p in error.get("loc", ())[1:]) or "body"

    too_long = [e for e in exc.errors if e.get("type") in _TOO_LONG]
    if too_long:
        return ErrorInfo(413, "payload_too_large", "; ".join(f"{where(e)}: {e.get('msg')}" for e in too_long))
    return ErrorInfo(422, "invalid_request", "; ".join(f"{where(e)}: {e.get('msg')}" for e in exc.errors[:10]))


def _respond(body: dict[str, Any], info: ErrorInfo) -> HttpResponse:
    response = JsonResponse(body, status=info.status)
    if info.retry_after is not None:
        response["Retry-After"] = str(info.retry_after)
    return response


def native_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    info = classify(exc)
    return _respond({"error": {"code": info.code, "message": info.message}}, info)


_OPENAI_TYPES = {401: "invalid_request_error", 404: "invalid_request_error", 429: "rate_limit_error"}
_OPENAI_CODES = {"rate_limited": "rate_limit_exceeded", "payload_too_large": "request_too_large"}


def openai_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    """OpenAI's error object. Invalid bodies are 400 there (the SDK's BadRequestError), not 422."""
    info = classify(exc)
    if info.status == 422:
        info = ErrorInfo(400, info.code, info.message)
    kind = _OPENAI_TYPES.get(info.status, "server_error" if info.status >= 500 else "invalid_request_error")
    body = {"error": {"message": info.message, "type": kind, "param": None,
                      "code": _OPENAI_CODES.get(info.code, info.code)}}
    return _respond(body, info)


def _build(*, title: str, namespace: str, description: str,
           handler: Callable[[HttpRequest, Exception], HttpResponse]) -> NinjaAPI:
    api = NinjaAPI(title=title, version="1", urls_namespace=namespace, description=description,
                   auth=[BearerKey(), HeaderKey()], parser=JsonOnlyParser())
    for exc_class in (Exception, Http404, HttpError, ValidationError, AuthenticationError, ApiError):
        api.add_exception_handler(exc_class, handler)  # type: ignore[arg-type]  # ninja types "an exception or its class"; it passes the instance
    return api


def _unknown_paths(api: NinjaAPI) -> None:
    """A router of its own, added last (the default router's URLs come first): a mistyped URL
    under the API is a JSON 404 like every other error."""
    fallback = Router()

    @fallback.api_operation(["GET", "POST", "PUT", "PATCH", "DELETE"], "/{path:rest}", auth=None,
                            include_in_schema=False)
    def unknown(request: HttpRequest, rest: str) -> HttpResponse:
        raise NotFound(f"no endpoint /{rest}")

    api.add_router("/", fallback)


api = _build(
    title="Answerdesk API", namespace="api", handler=native_error,
    description=(
        "Cited, tenant-scoped answers. Authenticate with a per-tenant API key as "
        "`Authorization: Bearer <key>` or `X-API-Key: <key>`; the key decides the tenant and the "
        "audiences. Errors are `{\"error\": {\"code\", \"message\"}}`. The OpenAI-compatible "
        "endpoint is documented at /api/v1/openai/docs."
    ),
)
api.add_router("/", answers_router)
api.add_router("/", documents_router)


@api.get("/health", auth=None, tags=["health"], summary="Database reachable, versions, embedding model")
def health(request: HttpRequest) -> HttpResponse:
    body, healthy = health_body()
    return JsonResponse(body, status=200 if healthy else 503)


openai_api = _build(
    title="Answerdesk OpenAI-compatible API", namespace="openai", handler=openai_error,
    description=(
        "Chat Completions wire format for existing clients and SDKs: point `base_url` at "
        "`/api/v1/openai` and use an Answerdesk key as the API key."
    ),
)
openai_api.add_router("/", openai_router)
_unknown_paths(api)
_unknown_paths(openai_api)
