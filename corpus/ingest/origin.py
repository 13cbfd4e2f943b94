"""Where a run's documents came from: how they arrived and, per file, what to show for it.

The ingest command records the path it read; an upload the file's name inside its job (what
the uploader called it); a website sync the page's URL; a resolution the escalation it
answered. One value per run, resolved per source file, so every writer states it the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from corpus.models import Document


@dataclass(frozen=True)
class DocumentOrigin:
    kind: str = Document.Origin.COMMAND
    # A file's absolute path (without an entry's `#fragment`) to its reference: a URL, an
    # escalation. Files not named here are referred to by their path, relative to `root`.
    refs: Mapping[str, str] = field(default_factory=dict)
    root: Path | None = None
    # One reference for every file of the run (an escalation's), ahead of `refs` and paths.
    ref: str = ""
    fetched_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.kind not in Document.Origin.values:
            raise ValueError(f"origin {self.kind!r} is not one of {', '.join(Document.Origin.values)}")

    def ref_for(self, source_path: str) -> str:
        if self.ref:
            return self.ref[:2000]
        path = source_path.split("#", 1)[0]
        if path in self.refs:
            return self.refs[path][:2000]
        if self.root is not None:
            try:
                return str(Path(path).relative_to(self.root))[:2000]
            except ValueError:
                pass
        return path[:2000]


COMMAND = DocumentOrigin()


def source_url(*, origin: str, ref: str) -> str:
    """The address a reader may follow to a source: a website page's URL, else nothing. Only
    http(s): a reference is text a writer chose, and a `javascript:` one must never be a link."""
    if origin == Document.Origin.WEBSITE and ref.lower().startswith(("https://", "http://")):
        return ref
    return ""
