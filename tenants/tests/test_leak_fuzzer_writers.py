"""Leak fuzzer, the writer's side: hostile uploads from keys and a narrower staff member.

The reader fuzzer (test_leak_fuzzer.py) asks; this one writes. Three tenants hold planted
documents, tickets and changelog entries in every audience. Writers holding fewer audiences
(a public key, a public+customer key, a customer-only key, and a tenant admin whose
membership holds public+customer, through the admin upload) send generated batches of
files that claim other audiences in front matter and entry fields, reuse the slugs and entry
ids of documents they cannot see, supersede them, and tag them through manifests (empty
matches among them). After every batch the writer's invariant must hold: nothing new or
changed lies outside the writer's audiences, every document outside them is byte-for-byte
what it was, and the other tenants did not move. A control removes the rule and must go red.

Size: WRITER_FUZZ_BATCHES per writer (default 8; each batch is one upload of up to 6 files).
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from corpus.ingest.flow import ingest_paths
from corpus.ingest.rights import Writer
from corpus.tests.helpers import assert_stayed_inside, documents, snapshot
from tenants import actions
from tenants.models import Tenant

IMMEDIATE = override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}})
TENANTS = ("wleak-a", "wleak-b", "wleak-c")
AUDIENCES = ("public", "customer", "internal")
# What a file may claim for itself: real audiences, a missing one, and spellings that must not
# be read as 'internal' by accident.
CLAIMS = ("public", "customer", "internal", "vip", "Internal", "internal ", "")
MATCHES = ("", " ", "refund", "the", "Refunds are issued")
BATCHES = int(os.environ.get("WRITER_FUZZ_BATCHES", "8"))


@dataclass(frozen=True)
class Planted:
    source_type: str
    slug: str
    audience: str


def _plant(root: Path, tenant: Tenant) -> list[Planted]:
    """Per audience: a page, a ticket and a changelog entry, ingested by the operator."""
    planted: list[Planted] = []
    folder = root / tenant.slug
    folder.mkdir(parents=True)
    tickets, entries = [], []
    for rank, audience in enumerate(AUDIENCES, start=1):
        (folder / f"refunds-{audience}.md").write_text(
            f"---\naudience: {audience}\n---\n# Refunds ({audience})\n\nRefunds are issued within "
            f"{len(audience)} days for {tenant.slug} {audience} readers.\n")
        tickets.append({"id": f"T-{audience}", "subject": "Refund delay", "question": "Where is my refund?",
                        "resolution": f"Refunds are issued in {len(audience)} days.", "audience": audience})
        entries.append({"id": f"v1.{rank}", "title": f"Release {audience}", "date": "2026-01-01",
                        "body": "Refunds are issued faster now.", "audience": audience})
        planted += [Planted("doc", f"refunds-{audience}", audience), Planted("ticket", f"T-{audience}", audience),
                    Planted("changelog", f"v1.{rank}", audience)]
    (root / f"{tenant.slug}-tickets.json").write_text(json.dumps(tickets))
    (root / f"{tenant.slug}-changelog.json").write_text(json.dumps(entries))
    assert ingest_paths(tenant=tenant, paths=[folder]).ok
    assert ingest_paths(tenant=tenant, paths=[root / f"{tenant.slug}-tickets.json"], source_type="ticket").ok
    assert ingest_paths(tenant=tenant, paths=[root / f"{tenant.slug}-changelog.json"], source_type="changelog").ok
    return planted


def _front_matter(claim: str, supersedes: str | None) -> str:
    lines = ([f"audience: '{claim}'"] if claim else []) + ([f"supersedes: {supersedes}"] if supersedes else [])
    return "---\n" + "\n".join(lines) + "\n---\n" if lines else ""


def hostile_batch(rng: random.Random, planted: list[Planted], n: int) -> tuple[str, list[SimpleUploadedFile]]:
    """One upload: its source type and up to six files that try every writer trick at once."""
    source_type = rng.choice(("doc", "doc", "ticket", "changelog"))
    of_type = [p for p in planted if p.source_type == source_type]
    files: list[SimpleUploadedFile] = []
    if source_type == "doc":
        for i in range(rng.randint(1, 5)):
            target = rng.choice(of_type)
            slug = target.slug if rng.random() < 0.4 else f"page-{n}-{i}"
            supersedes = rng.choice(of_type).slug if rng.random() < 0.4 else None
            body = f"{_front_matter(rng.choice(CLAIMS), supersedes)}# Page {n}.{i}\n\nRefunds are issued never ({n}).\n"
            files.append(SimpleUploadedFile(f"{slug}.md", body.encode()))
        if rng.random() < 0.5:
            named = rng.sample(planted, k=3)
            refs = "".join(f"      - {{source: {p.source_type}, slug: '{p.slug}'}}\n" for p in named)
            manifest = f"conflicts:\n  - id: c{n}\n    match: '{rng.choice(MATCHES)}'\n    documents:\n{refs}"
            files.append(SimpleUploadedFile("answerdesk-manifest.yaml", manifest.encode()))
        return source_type, files
    entries = []
    for i in range(rng.randint(1, 4)):
        target = rng.choice(of_type)
        entry_id = target.slug if rng.random() < 0.5 else f"X-{n}-{i}"
        claim = rng.choice(CLAIMS)
        entry: dict[str, Any] = ({"id": entry_id, "subject": "Refunds", "question": "q?", "resolution": f"Never ({n})."}
                                 if source_type == "ticket" else
                                 {"id": entry_id, "title": "Release", "date": "2026-02-01", "body": f"Changed ({n})."})
        if claim:
            entry["audience"] = claim
        entries.append(entry)
    return source_type, [SimpleUploadedFile(f"entries-{n}.json", json.dumps(entries).encode())]


@dataclass
class WriterSide:
    name: str
    held: set[str]
    client: Client
    headers: dict[str, str]
    via_admin: bool

    def send(self, tenant: Tenant, source_type: str, files: list[SimpleUploadedFile], capture: Any) -> int:
        with IMMEDIATE, capture(execute=True):
            if self.via_admin:
                response = self.client.post("/admin/corpus/ingestjob/add/", {
                    "tenant": tenant.pk, "audience": sorted(self.held)[-1], "source_type": source_type, "files": files})
            else:
                response = self.client.post("/api/v1/documents", data={
                    "files": files, "source_type": source_type, "audience": sorted(self.held)[-1]},
                    headers=self.headers)
        return response.status_code


def _writers(tenant: Tenant) -> list[WriterSide]:
    sides = []
    for held in (("public",), ("public", "customer"), ("customer",)):
        issued = actions.api_key_create(tenant=tenant, name="+".join(held), audience_slugs=held)
        sides.append(WriterSide(f"key {'+'.join(held)}", set(held), Client(),
                                {"Authorization": f"Bearer {issued.raw_key}"}, via_admin=False))
    admin = get_user_model().objects.create_user(f"{tenant.slug}-narrow-admin", password="pw", is_staff=True)
    actions.membership_grant(tenant=tenant, user=admin, role="owner", audience_slugs=["public", "customer"])
    admin.user_permissions.set(Permission.objects.filter(codename__in=["add_ingestjob", "view_ingestjob"]))
    client = Client()
    client.force_login(admin)
    sides.append(WriterSide("narrow tenant admin (admin upload)", {"public", "customer"}, client, {}, via_admin=True))
    return sides


def _world(tmp_path: Path) -> tuple[dict[str, Tenant], dict[str, list[Planted]]]:
    tenants, planted = {}, {}
    for slug in TENANTS:
        tenants[slug], _ = actions.tenant_get_or_create(slug=slug)
        planted[slug] = _plant(tmp_path, tenants[slug])
    return tenants, planted


def run_fuzz(tmp_path: Path, capture: Any, batches: int) -> dict[str, int]:
    """Every writer of the first tenant sends `batches` hostile uploads; the invariant is
    checked after each one. Returns what was sent, by HTTP status."""
    tenants, planted = _world(tmp_path)
    target, others = tenants[TENANTS[0]], [tenants[s] for s in TENANTS[1:]]
    others_before = {t.slug: snapshot(t) for t in others}
    statuses: dict[str, int] = {}
    rng = random.Random(15)
    for n, side in enumerate(_writers(target) * batches):
        before = snapshot(target)
        source_type, files = hostile_batch(rng, planted[target.slug], n)
        status = side.send(target, source_type, files, capture)
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        assert status in (202, 302), f"{side.name}: upload answered {status}"
        assert_stayed_inside(target, before, side.held)
    for tenant in others:
        assert snapshot(tenant) == others_before[tenant.slug], f"{tenant.slug} moved"
    return statuses


@pytest.mark.slow
@pytest.mark.django_db
def test_hostile_uploads_never_write_outside_the_writers_audiences(
        tmp_path: Path, settings: Any, django_capture_on_commit_callbacks: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    statuses = run_fuzz(tmp_path, django_capture_on_commit_callbacks, BATCHES)
    assert sum(statuses.values()) == 4 * BATCHES
    # The control that the uploads did land: writers wrote inside their audiences all along.
    written = [d for (kind, slug), d in documents(Tenant.objects.get(slug=TENANTS[0])).items()
               if slug.startswith(("page-", "X-"))]
    assert written and {d.audience.slug for d in written} <= {"public", "customer"}


@pytest.mark.slow
@pytest.mark.django_db
def test_forced_fail_the_writer_fuzzer_goes_red_without_the_rule(
        tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    monkeypatch.setattr(Writer, "may_write", lambda self, audience_slug: True)
    monkeypatch.setattr(Writer, "audience_ids", lambda self, tenant_audiences: None)
    with pytest.raises(AssertionError, match="outside|changed"):
        run_fuzz(tmp_path, django_capture_on_commit_callbacks, BATCHES)
