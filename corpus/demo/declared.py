"""What the demo corpus is declared to say (facts/<tenant>.yaml), and the documents it says it in.

The documents under <tenant>/ are the source. A declared fact only names text that must be in
one of them, under which heading, and the question a customer would ask for it; the golden sets
are checked against these declarations (corpus/tests/test_demo_facts.py). Documents are read
with the ingest's own parsers, so a heading here means what it means to a golden-set locator.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from corpus.ingest.flow import collect_files, parse_all
from corpus.parsers import ParsedDocument

DEMO_DIR = Path(__file__).resolve().parent
TENANTS = {"paylane": "PayLane (payments API)", "helpwise": "Helpwise (helpdesk SaaS)"}
# Demo tenants in a language PostgreSQL cannot stem (docs/decisions/0050): name, language and
# text-search configuration. Smaller than the English two: a Czech help centre of ~20 pages.
LANGUAGE_TENANTS = {"tlapka": ("Tlapka (e-shop pro mazlíčky)", "cs", "simple")}

Locator = dict[str, str]  # a golden-set locator: source, slug (doc) or id (entry), heading
DocumentKey = tuple[str, str]  # (source type, slug or entry id), as the ingest stores it


def document_key(where: Locator) -> DocumentKey:
    return where["source"], where.get("slug") or where["id"]


@dataclass(frozen=True)
class Fact:
    where: Locator
    text: str
    question: str
    contested: str = ""  # the manifest conflict this text is one side of


@dataclass(frozen=True)
class Stale:
    question: str
    where: Locator
    text: str
    outdated: str  # only the superseded document may still say this


@dataclass(frozen=True)
class Abstain:
    question: str
    absent: tuple[str, ...]  # terms the tenant's corpus never uses


@dataclass(frozen=True)
class Declared:
    tenant: str
    facts: tuple[Fact, ...]
    stale: tuple[Stale, ...]
    conflicts: dict[str, str]  # manifest conflict id -> the question that meets it
    must_abstain: tuple[Abstain, ...]


def tenant_folder(tenant: str, *, root: Path = DEMO_DIR) -> Path:
    return root / tenant


def source_paths(folder: Path) -> list[Path]:
    """What the demo loader ingests from a tenant folder (its manifest is passed on its own)."""
    return [folder / "docs", folder / "changelog.json", folder / "tickets.json"]


def read_declared(tenant: str, *, root: Path = DEMO_DIR) -> Declared:
    data: dict[str, Any] = yaml.safe_load((root / "facts" / f"{tenant}.yaml").read_text(encoding="utf-8"))
    return Declared(
        tenant=data["tenant"],
        facts=tuple(Fact(**item) for item in data["facts"]),
        stale=tuple(Stale(**item) for item in data["stale"]),
        conflicts={item["id"]: item["question"] for item in data["conflicts"]},
        must_abstain=tuple(Abstain(item["question"], tuple(item["absent"])) for item in data["must_abstain"]),
    )


def read_documents(folder: Path) -> dict[DocumentKey, ParsedDocument]:
    """Every document of a tenant folder, parsed as the ingest parses it; a file that fails raises."""
    files, failures, _, _ = collect_files(source_paths(folder))
    parsed = parse_all(files, source_type="doc")
    failed = failures + [(r.source_path, r.reason) for r in parsed if not isinstance(r, ParsedDocument)]
    if failed:
        raise ValueError(f"demo documents that do not parse: {failed}")
    return {(d.source_type, d.slug): d for d in parsed if isinstance(d, ParsedDocument)}


def text_under(document: ParsedDocument, heading: str) -> str:
    """The text of the document's sections that sit under `heading` (any level of their path)."""
    wanted = heading.lower()
    return "\n".join(s.text for s in document.sections if wanted in (h.lower() for h in s.heading_path))


def fact_problems(tenant: str, *, root: Path = DEMO_DIR) -> list[str]:
    """Every declared fact (and stale answer) that is not in its document under its heading."""
    declared = read_declared(tenant, root=root)
    documents = read_documents(tenant_folder(tenant, root=root))
    placed = {(*document_key(f.where), f.where["heading"], f.text): f.where for f in declared.facts}
    placed.update({(*document_key(s.where), s.where["heading"], s.text): s.where for s in declared.stale})
    problems: list[str] = []
    for (*_, text), where in placed.items():
        document = documents.get(document_key(where))
        label = f"{tenant}: {':'.join(document_key(where))}"
        if document is None:
            problems.append(f"{label}: no such document")
        elif text not in text_under(document, where["heading"]):
            found = any(text in s.text for s in document.sections)
            problems.append(f"{label}: {text!r} " + (f"is not under heading {where['heading']!r}" if found
                                                     else "is missing"))
    return problems
