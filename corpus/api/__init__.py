"""The documents endpoints of the REST API, one router mounted by config/api.py.

uploads.py      POST /documents (an upload becomes a background ingest job), GET /jobs/{id};
                its router also serves documents.py's operations
documents.py    GET /documents, GET and DELETE /documents/{slug}, archive and restore
schemas.py      the error body both share
"""
