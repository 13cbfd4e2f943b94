"""Every API path that takes an id answers 404 across audiences and tenants (issue 45, item 2).

The ids come from the live OpenAPI documents, /api/v1/openapi.json and the OpenAI-compatible
/api/v1/openai/openapi.json: every `{param}` of a path, under every method the path has (reads
and writes), and every integer `*_id` field of a JSON request body (an id sent in the body is
an id all the same). Each one needs an entry in MAKERS (how to make, through the product's own
flows, an object of a given audience in a given tenant) or in NOT_TENANT_DATA (why the id names
nothing of a tenant). An id with neither fails the test: a new endpoint is covered the day it
appears.

For each id, with a public-only key: the object of a narrower audience (internal) in the key's
own tenant, and a public object of another tenant, answer 404 with nothing of theirs in the
body, and a refused write leaves them as they were. The control: the key's own object answers
2xx, so the check can fail. The forced-fail runs plant a jobs lookup scoped by tenant alone (the
hole this item closed) and an id path with no maker, and each check goes red.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

import corpus.api.uploads
from answering.api.openai_messages import MODELS
from answering.models import Trace
from conftest import Cast
from corpus.models import IngestJob
from corpus.tests.helpers import snapshot
from tenants import actions
from tenants.rls import tenant_context

if TYPE_CHECKING:  # the test client's response (json(), templates, ...), declared by django-stubs only
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse

DOCUMENTS = ("/api/v1/openapi.json", "/api/v1/openai/openapi.json")
METHODS = ("get", "put", "post", "patch", "delete")
IMMEDIATE = override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}})
# The narrower audience and the one the probing key holds.
NARROWER, HELD = "internal", ("public",)


@dataclass(frozen=True)
class IdTarget:
    """One id an endpoint takes: in its path (`{name}`) or in its JSON body (`name`)."""

    path: str
    method: str
    name: str
    in_body: bool = False

    def __str__(self) -> str:
        return f"{self.method.upper()} {self.path} {'body ' if self.in_body else ''}{self.name}"


@dataclass(frozen=True)
class Made:
    """An object made for the check: its id, a word only it carries, and how to read its state."""

    value: str
    marker: str
    state: Callable[[], object]


@dataclass
class World:
    home: Cast
    other: Cast
    client: Client
    run_commits: Any  # django_capture_on_commit_callbacks
    words: Iterator[int] = field(default_factory=itertools.count)

    def headers(self, cast: Cast, audiences: tuple[str, ...]) -> dict[str, str]:
        issued = actions.api_key_create(tenant=cast.tenant, name="id isolation", audience_slugs=audiences)
        return {"Authorization": f"Bearer {issued.raw_key}"}

    def word(self, cast: Cast, audience: str) -> str:
        return f"quokka{cast.tenant.slug}{audience}{next(self.words)}"


Maker = Callable[[World, Cast, str], Made]


class IdLeak(AssertionError):
    """An id answered something other than a bare 404 to a key that may not see its object."""


def _writer(audience: str) -> tuple[str, ...]:
    # The narrowest key that may write into `audience`: the object carries that audience's rights.
    return tuple(dict.fromkeys(("public", audience)))


def _upload(world: World, cast: Cast, audience: str, name: str, text: str, *, run: bool) -> dict[str, Any]:
    files = {"files": [SimpleUploadedFile(name, text.encode())], "audience": audience}
    headers = world.headers(cast, _writer(audience))
    if not run:  # queued only: the worker never picks it up inside the test's transaction
        response = world.client.post("/api/v1/documents", data=files, headers=headers)
    else:
        with IMMEDIATE, world.run_commits(execute=True):
            response = world.client.post("/api/v1/documents", data=files, headers=headers)
    assert response.status_code == 202, response.content
    body: dict[str, Any] = response.json()
    return body


def make_job(world: World, cast: Cast, audience: str) -> Made:
    """An upload queued by a key holding `audience`; its file name is the marker."""
    word = world.word(cast, audience)
    job = _upload(world, cast, audience, f"{word}.md", f"# {word}\n\nText.\n", run=False)
    return Made(str(job["id"]), word, lambda: IngestJob.objects.filter(pk=job["id"]).values().first())


def make_document(world: World, cast: Cast, audience: str) -> Made:
    """A document uploaded and ingested through the API; its title is the marker, not its slug."""
    word = world.word(cast, audience)
    slug = f"doc-{next(world.words)}-{cast.tenant.slug}"
    _upload(world, cast, audience, f"{slug}.md", f"# {word}\n\nShipping {word} takes two days.\n", run=True)
    assert ("doc", slug) in snapshot(cast.tenant), "the upload's job did not ingest the document"
    return Made(slug, word, lambda: snapshot(cast.tenant).get(("doc", slug)))


def make_archived_document(world: World, cast: Cast, audience: str) -> Made:
    """A document archived through the API by a key of its audience (what restore acts on)."""
    made = make_document(world, cast, audience)
    archived = world.client.post(f"/api/v1/documents/{made.value}/archive",
                                 headers=world.headers(cast, _writer(audience)))
    assert archived.status_code == 200, archived.content
    return made


def make_trace(world: World, cast: Cast, audience: str) -> Made:
    """A trace of a question asked through POST /ask with a key holding `audience`."""
    word = world.word(cast, audience)
    response = world.client.post("/api/v1/ask", data={"question": f"What is {word}?"},
                                 content_type="application/json", headers=world.headers(cast, _writer(audience)))
    assert response.status_code == 200 and response.json()["trace_id"], response.content

    def state() -> object:
        with tenant_context(cast.tenant.id):
            return Trace.objects.filter(pk=response.json()["trace_id"]).values("feedback", "feedback_comment").first()
    return Made(str(response.json()["trace_id"]), word, state)


@dataclass(frozen=True)
class Covered:
    make: Maker
    body: dict[str, Any] = field(default_factory=dict)  # the rest of a JSON body that carries the id


# (path template, id name) -> how to make its object. Every id the documents name must be here
# or in NOT_TENANT_DATA.
MAKERS: dict[tuple[str, str], Covered] = {
    ("/api/v1/jobs/{job_id}", "job_id"): Covered(make_job),
    ("/api/v1/documents/{slug}", "slug"): Covered(make_document),
    ("/api/v1/documents/{slug}/archive", "slug"): Covered(make_document),
    ("/api/v1/documents/{slug}/restore", "slug"): Covered(make_archived_document),
    ("/api/v1/feedback", "trace_id"): Covered(make_trace, body={"vote": -1, "comment": "leaked?"}),
}
NOT_TENANT_DATA: dict[tuple[str, str], str] = {
    ("/api/v1/openai/models/{model_id}", "model_id"):
        "a model is a name from answering.api.openai_messages.MODELS, the same list for every key",
}


def _schema(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref", "")
    return document["components"]["schemas"][ref.rsplit("/", 1)[1]] if ref else schema


def _body_ids(document: dict[str, Any], operation: dict[str, Any]) -> list[str]:
    content = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if not content:
        return []
    properties = _schema(document, content["schema"]).get("properties", {})
    return [name for name, spec in properties.items() if name.endswith("_id") and spec.get("type") == "integer"]


def id_targets(documents: Iterable[dict[str, Any]]) -> list[IdTarget]:
    """Every id the OpenAPI documents say an endpoint takes, under every method."""
    targets: list[IdTarget] = []
    for document in documents:
        for path, operations in document["paths"].items():
            for method in (m for m in METHODS if m in operations):
                targets += [IdTarget(path, method, name) for name in re.findall(r"{(\w+)}", path)]
                targets += [IdTarget(path, method, name, True) for name in _body_ids(document, operations[method])]
    return targets


def uncovered(targets: Iterable[IdTarget]) -> list[str]:
    return [str(t) for t in targets if (t.path, t.name) not in MAKERS and (t.path, t.name) not in NOT_TENANT_DATA]


def send(world: World, target: IdTarget, made: Made, headers: dict[str, str]) -> TestResponse:
    if target.in_body:
        body = {**MAKERS[(target.path, target.name)].body, target.name: int(made.value)}
        return world.client.generic(target.method.upper(), target.path, data=json.dumps(body),
                                    content_type="application/json", headers=headers)
    url = target.path.replace(f"{{{target.name}}}", made.value)
    return world.client.generic(target.method.upper(), url, headers=headers)


def assert_isolated(world: World, target: IdTarget) -> None:
    """The narrower object and the other tenant's answer 404 and stay as they were; the key's own
    object answers 2xx. A leak raises IdLeak; a broken control is a plain assertion."""
    covered, headers = MAKERS[(target.path, target.name)], world.headers(world.home, HELD)
    for cast, audience in ((world.home, NARROWER), (world.other, "public")):
        made = covered.make(world, cast, audience)
        before = made.state()
        response = send(world, target, made, headers)
        text = response.content.decode(errors="replace")
        if response.status_code != 404 or made.marker in text:
            raise IdLeak(f"{target}: {cast.tenant.slug}/{audience} object answered {response.status_code}: "
                         f"{text[:300]}")
        if response.json()["error"]["code"] != "not_found" or made.state() != before:
            raise IdLeak(f"{target}: the refused request on a {cast.tenant.slug}/{audience} object changed it "
                         f"or said more than not_found: {text[:300]}")
    own = covered.make(world, world.home, HELD[0])
    response = send(world, target, own, headers)
    assert 200 <= response.status_code < 300, f"control {target}: {response.status_code} {response.content[:300]!r}"


@pytest.fixture
def world(acme: Cast, globex: Cast, client: Client, settings: Any, tmp_path: Path,
          django_capture_on_commit_callbacks: Any) -> World:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    # Dozens of requests from one address: the limits are tested elsewhere (config/tests/test_api_contract.py).
    settings.API_RATE_LIMIT_PER_ADDRESS = 0
    settings.API_RATE_LIMIT_PER_KEY = 0
    return World(acme, globex, client, django_capture_on_commit_callbacks)


def live_targets(client: Client) -> list[IdTarget]:
    documents = []
    for url in DOCUMENTS:
        response = client.get(url)
        assert response.status_code == 200, url
        documents.append(response.json())
    return id_targets(documents)


def test_every_id_in_the_openapi_documents_has_a_maker(db: Any, client: Client) -> None:
    targets = live_targets(client)
    # What the documents name today, so a reading that found nothing cannot pass.
    assert {str(t) for t in targets} >= {"GET /api/v1/jobs/{job_id} job_id", "DELETE /api/v1/documents/{slug} slug",
                                         "POST /api/v1/feedback body trace_id"}
    assert uncovered(targets) == [], "an endpoint takes an id with no maker in MAKERS: add one"


@pytest.mark.slow
def test_every_id_answers_404_across_audiences_and_tenants(world: World) -> None:
    targets = [t for t in live_targets(world.client) if (t.path, t.name) in MAKERS]
    assert len(targets) >= 6
    for target in targets:
        assert_isolated(world, target)


def test_a_model_id_names_nothing_of_a_tenant(world: World) -> None:
    """NOT_TENANT_DATA's one entry, checked: every key reads the same model, owned by its own tenant."""
    for model in MODELS:
        bodies = []
        for cast in (world.home, world.other):
            response = world.client.get(f"/api/v1/openai/models/{model}", headers=world.headers(cast, HELD))
            assert response.status_code == 200 and response.json()["owned_by"] == f"answerdesk:{cast.tenant.slug}"
            bodies.append({k: v for k, v in response.json().items() if k not in ("owned_by", "created")})
        assert bodies[0] == bodies[1] == {"id": model, "object": "model"}


def test_forced_fail_a_new_id_path_without_a_maker_is_reported(db: Any, client: Client) -> None:
    planted = {"paths": {"/api/v1/widgets/{widget_id}": {"get": {}, "delete": {}}}, "components": {"schemas": {}}}
    assert uncovered(id_targets([planted])) == ["GET /api/v1/widgets/{widget_id} widget_id",
                                                "DELETE /api/v1/widgets/{widget_id} widget_id"]


def test_forced_fail_a_jobs_lookup_by_tenant_alone_goes_red(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hole of issue 45 planted again: GET /jobs/{id} scoped by the tenant only."""
    def tenant_only(*, tenant: Any, audiences: Any, job_id: int) -> IngestJob | None:
        return IngestJob.objects.filter(tenant=tenant, pk=job_id).first()

    monkeypatch.setattr(corpus.api.uploads, "ingest_job_visible", tenant_only)
    with pytest.raises(IdLeak, match="internal object answered 200"):
        assert_isolated(world, IdTarget("/api/v1/jobs/{job_id}", "get", "job_id"))
