"""Golden sets (format: shared/eval/GOLDEN_FORMAT.md), loaded and validated with clear errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CASE_TYPES = ("normal", "multi_turn", "must_abstain", "stale", "conflict", "audience_probe", "tenant_probe",
              "greeting")
SOURCES = ("doc", "changelog", "ticket", "pdf")


class GoldenError(ValueError):
    pass


@dataclass(frozen=True)
class Locator:
    source: str = "doc"
    slug: str | None = None
    heading: str | None = None
    page: int | None = None
    id: str | None = None

    @property
    def document_slug(self) -> str:
        return self.id if self.id is not None else str(self.slug)

    def describe(self) -> str:
        parts = [f"{self.source}:{self.document_slug}"]
        if self.heading:
            parts.append(f"#{self.heading}")
        if self.page:
            parts.append(f"p{self.page}")
        return "".join(parts)


@dataclass(frozen=True)
class Case:
    id: str
    type: str
    question: str
    history: tuple[dict[str, str], ...] = ()
    expected: tuple[Locator, ...] = ()
    must_contain: tuple[str, ...] = ()
    must_not_contain: tuple[str, ...] = ()
    tenant: str | None = None  # tenant_probe: asked as this tenant
    audience: str | None = None  # audience_probe: asked as this audience


@dataclass(frozen=True)
class GoldenSet:
    path: str
    tenant: str
    audience: str
    cases: tuple[Case, ...] = field(default_factory=tuple)


def _locator(raw: Any, where: str) -> Locator:
    if not isinstance(raw, dict):
        raise GoldenError(f"{where}: a locator must be a mapping, got {raw!r}")
    unknown = set(raw) - {"source", "slug", "heading", "page", "id"}
    if unknown:
        raise GoldenError(f"{where}: unknown locator keys {sorted(unknown)}")
    source = str(raw.get("source", "doc"))
    if source not in SOURCES:
        raise GoldenError(f"{where}: source {source!r} is not one of {', '.join(SOURCES)}")
    if not raw.get("slug") and not raw.get("id"):
        raise GoldenError(f"{where}: a locator needs a slug or an id")
    page = raw.get("page")
    return Locator(source=source, slug=raw.get("slug"), heading=raw.get("heading"),
                   page=int(page) if page is not None else None, id=str(raw["id"]) if raw.get("id") else None)


def load_golden(path: Path | str) -> GoldenSet:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise GoldenError(f"{path}: cannot read: {exc}") from exc
    if not isinstance(data, dict) or "cases" not in data:
        raise GoldenError(f"{path}: expected a mapping with 'tenant' and 'cases'")
    cases: list[Case] = []
    seen: set[str] = set()
    for index, raw in enumerate(data["cases"] or []):
        where = f"{path} case #{index}"
        if not isinstance(raw, dict) or not raw.get("id") or not raw.get("question"):
            raise GoldenError(f"{where}: every case needs an id and a question")
        case_id = str(raw["id"])
        if case_id in seen:
            raise GoldenError(f"{where}: duplicate id {case_id}")
        seen.add(case_id)
        kind = str(raw.get("type", "normal"))
        if kind not in CASE_TYPES:
            raise GoldenError(f"{where} ({case_id}): type {kind!r} is not one of {', '.join(CASE_TYPES)}")
        expected = tuple(_locator(x, f"{where} ({case_id})") for x in raw.get("expected") or [])
        if kind in ("normal", "multi_turn", "stale", "conflict") and not expected:
            raise GoldenError(f"{where} ({case_id}): a {kind} case needs expected locators")
        history = tuple({"role": str(t["role"]), "content": str(t["content"])} for t in raw.get("history") or [])
        cases.append(Case(
            id=case_id, type=kind, question=str(raw["question"]), history=history, expected=expected,
            must_contain=tuple(str(x) for x in raw.get("must_contain") or []),
            must_not_contain=tuple(str(x) for x in raw.get("must_not_contain") or []),
            tenant=raw.get("tenant"), audience=raw.get("audience"),
        ))
    if not data.get("tenant"):
        raise GoldenError(f"{path}: missing top-level tenant")
    return GoldenSet(path=str(path), tenant=str(data["tenant"]), audience=str(data.get("audience") or "public"),
                     cases=tuple(cases))
