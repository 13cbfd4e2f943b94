"""Errors the API layers raise, with a stable machine-readable code each.

They live on the ground floor so that every app's router (answering, corpus) can raise them
without importing config; config/api.py renders them in the native shape
`{"error": {"code", "message"}}` and in OpenAI's `{"error": {"message", "type", "code"}}`.
"""

from __future__ import annotations


class ApiError(Exception):
    def __init__(self, *, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class NotFound(ApiError):
    """The one answer for "missing" and "another tenant's": never a 403 that confirms existence."""

    def __init__(self, message: str = "not found", *, code: str = "not_found") -> None:
        super().__init__(status=404, code=code, message=message)


class PayloadTooLarge(ApiError):
    def __init__(self, message: str) -> None:
        super().__init__(status=413, code="payload_too_large", message=message)


class InvalidRequest(ApiError):
    def __init__(self, message: str, *, status: int = 422, code: str = "invalid_request") -> None:
        super().__init__(status=status, code=code, message=message)


class UnsupportedMediaType(ApiError):
    def __init__(self, message: str) -> None:
        super().__init__(status=415, code="unsupported_media_type", message=message)


class RateLimited(ApiError):
    def __init__(self, *, retry_after: int, scope: str) -> None:
        super().__init__(status=429, code="rate_limited",
                         message=f"too many requests for this {scope}; retry after {retry_after} s")
        self.retry_after = retry_after
        self.scope = scope
