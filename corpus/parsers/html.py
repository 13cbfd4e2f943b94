"""HTML pages and generated documentation sites (Sphinx, DocBook, MkDocs).

Two passes over the set of pages: the first strips what is navigation by construction
(nav, header, footer, breadcrumbs, sidebars, tables of contents) and splits each page into
blocks under its heading tree; the second drops any block whose text recurs on many pages
(running headers, "Prev / Up / Next" bars, copyright lines), which is how boilerplate that no
selector names is still found. Parsing is selectolax (Lexbor), never regexes over markup.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from corpus.parsers import ParsedDocument, ParseError, ParseFailure, ParseResult, Section, SourceFile, fingerprint

_STRIP = ", ".join(
    [
        "script", "style", "noscript", "template", "svg", "iframe", "form", "button",
        "nav", "header", "footer", "aside",
        "[role=navigation]", "[role=banner]", "[role=contentinfo]", "[aria-hidden=true]",
        ".navheader", ".navfooter", ".breadcrumb", ".breadcrumbs", ".sidebar", ".sphinxsidebar",
        ".related", ".toc", "#toc", ".md-header", ".md-footer", ".md-sidebar", ".md-nav",
        ".headerlink", ".skip-link", ".wy-nav-side", ".rst-footer-buttons", ".footer", ".header",
    ]
)
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = {"p", "pre", "li", "dt", "dd", "td", "th", "blockquote", "caption", "figcaption"}
_SELECT = ", ".join([*_HEADINGS, *_BLOCKS])
# A block seen on at least this share of a site's pages (and on 3+ pages) is boilerplate.
_REPEAT_SHARE = 0.5
_REPEAT_MIN_PAGES = 3


class NavigationOnly(ParseError):
    """A page that is nothing but navigation (a chapter's table of contents): skipped, not failed."""


@dataclass
class _Page:
    file: SourceFile
    title: str
    items: list[tuple[int, str]]  # (heading level, text) for headings; (0, text) for blocks
    digest: str


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?)\]])")


def _clean(text: str) -> str:
    # Inline elements are joined with a space so words never glue; undo it before punctuation.
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(text.split()))


_ADMONITIONS = ("note", "warning", "tip", "caution", "important", "admonition", "callout")


def _in_admonition(node: LexborNode) -> bool:
    """Headings of note/warning boxes label the box; they do not open a section."""
    parent = node.parent
    while parent is not None and parent.tag not in ("body", "html"):
        classes = (parent.attributes.get("class") or "").lower().split()
        if any(c in _ADMONITIONS for c in classes):
            return True
        parent = parent.parent
    return False


def _inside_block(node: LexborNode) -> bool:
    parent = node.parent
    while parent is not None and parent.tag not in ("body", "html"):
        if parent.tag in _BLOCKS:
            return True
        parent = parent.parent
    return False


def extract_page(file: SourceFile, raw: bytes) -> _Page:
    if b"\x00" in raw[:8192]:
        raise ParseError("binary file (NUL bytes), not HTML")
    tree = LexborHTMLParser(raw)
    title_node = tree.css_first("title")
    title = _clean(title_node.text()) if title_node else ""
    body = tree.body
    if body is None:
        raise ParseError("no <body>")
    for node in body.css(_STRIP):
        node.decompose()
    items: list[tuple[int, str]] = []
    for node in body.css(_SELECT):
        tag = node.tag
        if tag in _HEADINGS:
            text = _clean(node.text(separator=" "))
            if text:
                items.append((0, f"{text}:") if _in_admonition(node) else (_HEADINGS[tag], text))
            continue
        if _inside_block(node):
            continue
        if tag == "pre":
            text = "\n".join(line.rstrip() for line in node.text().strip("\n").split("\n"))
        else:
            text = _clean(node.text(separator=" "))
            if tag == "li":
                text = f"- {text}" if text else text
        if text:
            items.append((0, text))
    if not title:
        title = next((text for level, text in items if level), "")
    return _Page(file=file, title=title, items=items, digest=fingerprint(raw))


def boilerplate(pages: list[_Page]) -> set[str]:
    if len(pages) < _REPEAT_MIN_PAGES:
        return set()
    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({text for level, text in page.items if level == 0})
    threshold = max(_REPEAT_MIN_PAGES, int(len(pages) * _REPEAT_SHARE))
    return {text for text, count in counts.items() if count >= threshold}


def build_document(page: _Page, *, repeated: set[str], source_type: str) -> ParsedDocument:
    title = page.title or page.file.slug
    stack: list[tuple[int, str]] = []
    sections: list[Section] = []
    buffer: list[str] = []

    def flush() -> None:
        if buffer:
            path = (title, *[h for _, h in stack if h != title])
            sections.append(Section(heading_path=path, text="\n".join(buffer)))
            buffer.clear()

    for level, text in page.items:
        if level == 0:
            if text not in repeated:
                buffer.append(text)
            continue
        flush()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
    flush()
    if not sections:
        raise NavigationOnly("only navigation: nothing left after stripping menus and tables of contents")
    return ParsedDocument(
        slug=page.file.slug,
        title=title,
        source_type=source_type,
        sections=sections,
        source_path=str(page.file.path),
        fingerprint=page.digest,
    )


def parse_files(files: list[SourceFile], *, source_type: str) -> Iterator[ParseResult]:
    pages: list[_Page] = []
    for file in files:
        try:
            pages.append(extract_page(file, file.read_bytes()))
        except (ParseError, OSError) as exc:
            yield ParseFailure(str(file.path), str(exc))
    repeated = boilerplate(pages)
    for page in pages:
        try:
            yield build_document(page, repeated=repeated, source_type=source_type)
        except NavigationOnly as exc:
            yield ParseFailure(str(page.file.path), str(exc), skipped=True)
        except ParseError as exc:
            yield ParseFailure(str(page.file.path), str(exc))
