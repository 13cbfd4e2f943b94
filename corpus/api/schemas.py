"""The error body the documents endpoints share (corpus/api/uploads.py, corpus/api/documents.py)."""

from __future__ import annotations

from ninja import Schema


class ErrorDetail(Schema):
    code: str
    message: str


class ErrorOut(Schema):
    error: ErrorDetail
