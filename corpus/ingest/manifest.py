"""`answerdesk-manifest.yaml` at the root of an ingested folder: facts about the corpus that
no single document states, such as two live documents that disagree (unmarked conflicts)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from corpus.parsers import ParseError
from corpus.parsers.budget import FIELD_LIMITS, MAX_MANIFEST_CHARS, load_yaml, scalar

MANIFEST_NAME = "answerdesk-manifest.yaml"


class ManifestError(ValueError):
    pass


class DocumentRef(NamedTuple):
    """A document's key, equal to the (source_type, slug) pairs ingest keys documents by."""

    source_type: str
    slug: str


@dataclass(frozen=True)
class Conflict:
    id: str
    match: str
    documents: tuple[DocumentRef, ...]
    note: str = ""


def _text(value: object, *, what: str, limit: int = 1000) -> str:
    try:
        text = str(scalar(value, what=what))
    except ParseError as exc:
        raise ManifestError(str(exc)) from exc
    if len(text) > limit:
        raise ManifestError(f"{what} is {len(text):,} characters; the limit is {limit:,}")
    return text


def load_manifest(folder: Path, *, name: str = MANIFEST_NAME) -> list[Conflict]:
    path = folder / name
    if not path.is_file():
        return []
    size = path.stat().st_size
    if size > MAX_MANIFEST_CHARS:  # bytes bound characters from above: refuse before reading
        raise ManifestError(f"{path}: {size:,} bytes; the limit is {MAX_MANIFEST_CHARS:,}")
    try:
        data = load_yaml(path.read_text(encoding="utf-8"), what="manifest", max_chars=MAX_MANIFEST_CHARS) or {}
    except ParseError as exc:  # anchors and aliases (a billion laughs) are refused before building
        raise ManifestError(f"{path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{path}: not UTF-8 (byte {exc.start})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("conflicts") or [], list):
        raise ManifestError(f"{path}: expected a mapping with a list under 'conflicts'")
    conflicts = []
    for index, item in enumerate(data.get("conflicts") or []):
        try:
            if not isinstance(item, dict) or not isinstance(item["documents"], list):
                raise TypeError("a conflict is a mapping whose documents are a list")
            refs = tuple(
                DocumentRef(source_type=_text(ref.get("source", "doc"), what="source", limit=32),
                            slug=_text(ref.get("slug") or ref["id"], what="slug", limit=FIELD_LIMITS["slug"]))
                for ref in item["documents"]
            )
            conflicts.append(Conflict(id=_text(item["id"], what="id", limit=200),
                                      match=_text(item["match"], what="match"), documents=refs,
                                      note=_text(item.get("note", ""), what="note")))
        except ManifestError as exc:
            raise ManifestError(f"{path}: conflict #{index}: {exc}") from exc
        except (KeyError, TypeError, AttributeError) as exc:
            raise ManifestError(f"{path}: conflict #{index} needs id, match and documents ({exc})") from exc
    return conflicts
