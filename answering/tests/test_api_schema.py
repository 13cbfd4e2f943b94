"""The OpenAPI documents of both APIs validate against the OpenAPI specification."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from openapi_spec_validator import validate


@pytest.mark.parametrize(("url", "paths"), [
    ("/api/v1/openapi.json", {"/api/v1/ask", "/api/v1/feedback", "/api/v1/documents", "/api/v1/jobs/{job_id}",
                              "/api/v1/health", "/api/v1/documents/{slug}", "/api/v1/documents/{slug}/archive",
                              "/api/v1/documents/{slug}/restore"}),
    ("/api/v1/openai/openapi.json", {"/api/v1/openai/chat/completions", "/api/v1/openai/models"}),
])
def test_openapi_schema_validates(client: Client, db: Any, url: str, paths: set[str]) -> None:
    response = client.get(url)
    assert response.status_code == 200
    schema = response.json()
    validate(schema)
    assert paths <= set(schema["paths"])
    # Every keyed endpoint declares the key schemes; health alone is open.
    schemes = set(schema["components"]["securitySchemes"])
    assert schemes == {"BearerKey", "HeaderKey"}
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            assert bool(operation.get("security")) == (not path.endswith("/health")), path


def test_a_broken_schema_would_fail_the_validator() -> None:
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

    with pytest.raises(OpenAPIValidationError):
        validate({"openapi": "3.1.0", "info": {"title": "x"}, "paths": {"/a": {"get": {"responses": "nope"}}}})


def test_docs_page_is_served(client: Client, db: Any) -> None:
    assert client.get("/api/v1/docs").status_code == 200


@pytest.mark.parametrize(("url", "shape"), [("/api/v1/nope", {"code", "message"}),
                                            ("/api/v1/openai/v2/engines", {"message", "type", "param", "code"})])
def test_unknown_api_paths_are_json_404s(client: Client, db: Any, url: str, shape: set[str]) -> None:
    for response in (client.get(url), client.post(url, data="{}", content_type="application/json")):
        assert response.status_code == 404 and set(response.json()["error"]) == shape


def test_openai_bad_json_is_a_400_error_object(client: Client, db: Any) -> None:
    from tenants import actions
    from tenants.models import Tenant

    tenant, _ = actions.tenant_get_or_create(slug="schema-json")
    key = actions.api_key_create(tenant=Tenant.objects.get(pk=tenant.pk), name="k").raw_key
    response = client.post("/api/v1/openai/chat/completions", data="{oops", content_type="application/json",
                           headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_json"
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert client.get("/api/v1/openai/docs").status_code == 200
