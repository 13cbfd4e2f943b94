"""`answerdesk-manifest.yaml` at the root of an ingested folder: facts about the corpus that
no single document states, such as two live documents that disagree (unmarked conflicts)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

MANIFEST_NAME = "answerdesk-manifest.yaml"


class ManifestError(ValueError):
    pass


@dataclass(frozen=True)
class DocumentRef:
    source_type: str
    slug: str


@dataclass(frozen=True)
class Conflict:
    id: str
    match: str
    documents: tuple[DocumentRef, ...]
    note: str = ""


def load_manifest(folder: Path, *, name: str = MANIFEST_NAME) -> list[Conflict]:
    path = folder / name
    if not path.is_file():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ManifestError(f"{path}: not valid YAML: {exc}") from exc
    conflicts = []
    for index, item in enumerate(data.get("conflicts") or []):
        try:
            refs = tuple(
                DocumentRef(source_type=str(ref.get("source", "doc")), slug=str(ref.get("slug") or ref["id"]))
                for ref in item["documents"]
            )
            conflicts.append(Conflict(id=str(item["id"]), match=str(item["match"]), documents=refs,
                                      note=str(item.get("note", ""))))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ManifestError(f"{path}: conflict #{index} needs id, match and documents ({exc})") from exc
    return conflicts
