"""What in a folder is not a page: the assets of a generated documentation site.

A Sphinx build directory holds, beside its pages, theme files (`_static/`, where the Python
docs keep a `glossary.json` the entries parser would refuse), the reStructuredText sources of
every page again (`_sources/*.txt`, which the text parser would ingest as duplicates),
highlighted source code (`_modules/`), images, downloads, and generated index and search
pages. None of them is a failed page: each is skipped and counted with its reason, so an
ingest of a whole build exits 0 when every page went in.

The Sphinx rules apply only below a build root, a folder holding a marker Sphinx always
writes (`searchindex.js`, `objects.inv`, `.buildinfo`): a Markdown folder that happens to
have a `_static/` or a `search.html` of its own keeps them. DocBook builds (the PostgreSQL
manual) need no rule of their own: their only non-pages are stylesheets and images, which no
parser claims.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

BUILD_MARKERS = ("searchindex.js", "objects.inv", ".buildinfo")

ASSET_FOLDERS: dict[str, str] = {
    "_static": "Sphinx theme and script assets (_static/)",
    "_sources": "Sphinx page sources; the built pages are ingested instead (_sources/)",
    "_images": "Sphinx images (_images/)",
    "_downloads": "Sphinx downloads attached to pages (_downloads/)",
    # viewcode's highlighted listings: the library's code, not its documentation, and every
    # identifier in them would outrank the reference page that explains it.
    "_modules": "Sphinx highlighted source code, not documentation (_modules/)",
}
GENERATED = "Sphinx generated index or search page (genindex, *-modindex, search, searchindex, objects.inv)"


def _generated(name: str) -> bool:
    name = name.lower()
    stem, _, suffix = name.partition(".")
    return name in ("objects.inv", "searchindex.js", "searchindex.json", "search.html", "genindex.html") or (
        suffix == "html" and (stem.startswith("genindex-") or stem.endswith("-modindex")))


def build_roots(folder: Path) -> frozenset[Path]:
    """Every Sphinx build directory at or below folder."""
    return frozenset(marker.parent for name in BUILD_MARKERS for marker in folder.rglob(name) if marker.is_file())


def _nearest_root(file: Path, roots: Iterable[Path]) -> Path | None:
    found = [root for root in roots if root in file.parents]
    return max(found, key=lambda root: len(root.parts)) if found else None


def asset_reason(file: Path, roots: frozenset[Path]) -> str | None:
    """Why a file of a Sphinx build is not a page, or None when it may be one."""
    root = _nearest_root(file, roots)
    if root is None:
        return None
    relative = PurePosixPath(file.relative_to(root).as_posix())
    for part in relative.parts[:-1]:
        if part in ASSET_FOLDERS:
            return ASSET_FOLDERS[part]
    if len(relative.parts) == 1 and _generated(relative.name):
        return GENERATED
    return None


def unsupported_reason(file: Path) -> str:
    return f"no parser for {file.suffix.lower() or 'files without an extension'}"
