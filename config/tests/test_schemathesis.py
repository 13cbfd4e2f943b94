"""schemathesis against both OpenAPI documents, on a live server with a valid key.

Every operation of `/api/v1/openapi.json` and `/api/v1/openai/openapi.json` gets generated
requests, valid and invalid; every response must be free of server errors and conform to
the schema (status code, content type, body, headers). The server has its own process with
the rate limits off (the fuzzer would otherwise mostly meet 429s), its own upload folder, and
the key belongs to a tenant of its own, so fuzzed uploads and feedback touch nobody else.
Bounded by MAX_EXAMPLES per operation so it runs in a few minutes on two cores.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from config import api as config_api
from config.liveserver import serve

pytestmark = pytest.mark.slow  # a uvicorn process of its own
MAX_EXAMPLES = 50
STATUSES: Counter[tuple[str, int]] = Counter()


@dataclass(frozen=True)
class FuzzTarget:
    url: str
    key: str


# One document, so the documents' example question is answered with sources and the answer's
# schema (sources included) is checked on real data, not only on abstentions.
DOCUMENT = """# API errors

## PL-4031

Error PL-4031 means the card was declined for insufficient funds. Ask the customer to use
another card or to contact their bank, then retry the payment.
"""


@pytest.fixture(scope="module")
def target(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzTarget]:
    from corpus.ingest.flow import ingest_paths
    from tenants import actions

    slug = f"fuzz-{uuid.uuid4().hex[:8]}"
    folder = tmp_path_factory.mktemp("fuzz-docs")
    (folder / "errors.md").write_text(DOCUMENT)
    with django_db_blocker.unblock():
        tenant = actions.tenant_create(slug=slug, name="Schema fuzzing")
        ingest_paths(tenant=tenant, paths=[folder])
        key = actions.api_key_create(tenant=tenant, name="schemathesis",
                                     audience_slugs=["public", "customer", "internal"]).raw_key
    with tempfile.TemporaryDirectory(prefix="adfuzz-media-") as media, serve(extra_env={
        "API_RATE_LIMIT_PER_KEY": "0", "API_RATE_LIMIT_PER_ADDRESS": "0", "MEDIA_ROOT": media,
    }) as url:
        yield FuzzTarget(url=url, key=key)
    # The figures docs/reliability.md quotes (shown with -s).
    print(f"\nschemathesis: {sum(STATUSES.values())} requests;", ", ".join(
        f"{label} {status}: {n}" for (label, status), n in sorted(STATUSES.items())))


def _document(api: Any) -> dict[str, Any]:
    from ninja.responses import NinjaJSONEncoder

    return dict(json.loads(json.dumps(api.get_openapi_schema(), cls=NinjaJSONEncoder)))


# Built in-process at collection (schemathesis' lazy from_fixture loader does not run under
# pytest 9); the first test proves the live server serves exactly these documents.
DOCUMENTS = {"/api/v1/openapi.json": _document(config_api.api),
             "/api/v1/openai/openapi.json": _document(config_api.openai_api)}
# A string over its maxLength is a 413 here by design (docs/decisions/0014-api-shape.md), a
# rejection like any 4xx; schemathesis' default list for invalid data omits it. And a chat's
# conversation rules (the last message is the user's, some message has text) are beyond JSON
# Schema, so schema-valid chats may be refused 400, as OpenAI refuses them.
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429"]
CONFIG = SchemathesisConfig.from_dict({
    "checks": {"negative_data_rejection": {
        "expected-statuses": ["400", "401", "404", "405", "413", "415", "422", "429"]}},
    "operations": [{"include-path": "/api/v1/openai/chat/completions", "include-method": "POST",
                    "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "400"]}}}],
})
native = schemathesis.openapi.from_dict(DOCUMENTS["/api/v1/openapi.json"], config=CONFIG)
openai_compatible = schemathesis.openapi.from_dict(DOCUMENTS["/api/v1/openai/openapi.json"], config=CONFIG)
BOUNDED = settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
                   suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("path", list(DOCUMENTS))
def test_the_fuzzed_documents_are_the_served_ones(target: FuzzTarget, path: str) -> None:
    served = httpx.get(f"{target.url}{path}", timeout=30)
    assert served.status_code == 200 and served.json() == DOCUMENTS[path]


def fuzz(case: Any, target: FuzzTarget) -> None:
    """case.call_and_validate, split to count statuses; checks that replay a request (auth
    ignored, use after free) get the same base URL, key and timeout."""
    headers = {"Authorization": f"Bearer {target.key}"}
    response = case.call(base_url=target.url, headers=headers, timeout=120)
    STATUSES[(f"{case.method.upper()} {case.path}", response.status_code)] += 1
    case.validate_response(response, headers=headers,
                           transport_kwargs={"base_url": target.url, "headers": dict(headers), "timeout": 120})


@native.parametrize()
@BOUNDED
def test_native_api_has_no_server_errors_and_matches_its_schema(case: Any, target: FuzzTarget) -> None:
    fuzz(case, target)


@openai_compatible.parametrize()
@BOUNDED
def test_openai_api_has_no_server_errors_and_matches_its_schema(case: Any, target: FuzzTarget) -> None:
    fuzz(case, target)
