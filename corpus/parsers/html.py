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
from functools import partial

from selectolax.lexbor import LexborHTMLParser, LexborNode

from corpus.parsers import (
    ParsedDocument,
    ParseError,
    ParseFailure,
    ParseResult,
    SourceFile,
    budget,
    fingerprint,
    outline,
)

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
    items: list[outline.Item]
    digest: str


# Measured in lexbor (selectolax 1.0.2), where a running parse cannot be interrupted: every
# start tag walks the stack of open elements, so nesting depth d costs d per tag (200,000
# nested <div> took 8 minutes), and the options of a <select> cost quadratically (20,000
# took 3.4 s). A linear scan of the raw bytes refuses both before lexbor sees them.
MAX_DEPTH = 256
MAX_OPTIONS = 2_000
MAX_BLOCKS = 50_000
# Void elements, and those whose end tag the parser supplies itself: they never deepen a page.
_UNCOUNTED = (
    "area|base|br|col|embed|hr|img|input|link|meta|param|source|track|wbr|keygen|frame|basefont|bgsound|image"
    "|p|li|dt|dd|option|optgroup|tr|td|th|thead|tbody|tfoot|colgroup|caption|rb|rt|rp|rtc|html|head|body"
)
# Only tags that can deepen the page reach the Python loop; the rest are skipped in C.
_TAG = re.compile(rb"<!--|<(/?)(?!(?:" + _UNCOUNTED.encode() + rb")[\s/>])([a-z][a-z0-9]*)")
_OPTION = re.compile(rb"<option[\s/>]")
_BLOCK_TAG = re.compile(rb"<(?:h[1-6]|p|pre|li|dt|dd|td|th|blockquote|caption|figcaption)[\s/>]")
_RAW_TEXT = frozenset(b"script style textarea title xmp iframe noembed noframes".split())


def prescan(raw: bytes) -> None:
    """Refuse what lexbor (or our loop) would take too long on, judged from the tags alone."""
    lower = raw.lower()
    if (options := len(_OPTION.findall(lower))) > MAX_OPTIONS:
        raise ParseError(f"HTML has {options:,} <option> elements; the limit is {MAX_OPTIONS:,}")
    if (blocks := len(_BLOCK_TAG.findall(lower))) > MAX_BLOCKS:
        raise ParseError(f"HTML page has {blocks:,} headings and blocks; the limit is {MAX_BLOCKS:,}")
    depth = seen = 0
    position = 0
    while (match := _TAG.search(lower, position)) is not None:
        seen += 1
        if not seen & 1023:
            budget.tick()
        position = match.end()
        closing, name = match.group(1), match.group(2)
        if match.group(0) == b"<!--" or (name == b"plaintext" and not closing):
            end = lower.find(b"-->", position) if name is None else -1
            if end < 0:
                return  # the rest is a comment or plain text: no more elements
            position = end + 3
            continue
        if closing:
            depth -= 1 if depth else 0
            continue
        depth += 1
        if depth > MAX_DEPTH:
            raise ParseError(f"HTML nests elements more than {MAX_DEPTH} deep (counted from its tags);"
                             f" the limit is {MAX_DEPTH}")
        if name in _RAW_TEXT:
            end = lower.find(b"</" + name, position)
            if end < 0:
                return
            position = end


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?)\]])")


def _clean(text: str) -> str:
    # Elements joined by a space, and source markup that breaks lines anywhere, leave a space
    # before a full stop or a closing bracket.
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(text.split()))


def _words(node: LexborNode, *, skip: frozenset[str] = frozenset()) -> str:
    """The node's text without the elements in `skip`, every element's text joined by a space."""
    if not skip:
        return _clean(node.text(separator=" "))
    return _clean(" ".join((child.text_content if child.tag == "-text" else child.text(separator=" ")) or ""
                           for child in node.iter(include_text=True) if child.tag not in skip))


_ADMONITIONS = ("note", "warning", "tip", "caution", "important", "admonition", "callout")
# Flags of a node and its ancestors up to <body>.
_ADMONITION, _BLOCK, _HEADING = 1, 2, 4


_LISTS = frozenset({"ul", "ol"})
_NESTED_LISTS = "long-nested-lists-1"


def _holds_list(node: LexborNode) -> bool:
    return any(child.tag in _LISTS for child in node.iter())


def _read_by_item(node: LexborNode) -> bool:
    """A list item holding a list whose words would not fit in one line: its own words, then each
    nested item as a line. A Sphinx contents page nests a whole manual under one item (190,977
    characters for Python's), which failed the line limit. Any other list item stays one line,
    as it always was, so no stored page changes: read item by item everywhere, nested lists
    moved no case that the re-ingest's own churn did not also move (docs/decisions/0076)."""
    return node.tag == "li" and _holds_list(node) and len(node.text(separator=" ")) > budget.max_line_chars()


def _own_text(node: LexborNode) -> str:
    """A list item's words without its nested lists'."""
    return _words(node, skip=_LISTS)


class _Ancestry:
    """What encloses a node (an admonition box, a block, a heading), memoised per node.

    Walking every node's parents afresh cost depth × nodes: 8,000 nested sections with a
    heading each took 8 s, 32,000 took minutes. With the memo each node is visited once."""

    def __init__(self) -> None:
        self._flags: dict[int, int] = {}

    def _own(self, node: LexborNode) -> int:
        tag = node.tag
        if _read_by_item(node):
            flags = 0  # its nested items are blocks of their own
        else:
            flags = _BLOCK if tag in _BLOCKS else _HEADING if tag in _HEADINGS else 0
        classes = (node.attributes.get("class") or "").lower().split()
        return flags | (_ADMONITION if any(c in _ADMONITIONS for c in classes) else 0)

    def of(self, node: LexborNode) -> int:
        """Flags of node's strict ancestors below <body>."""
        chain: list[LexborNode] = []
        parent = node.parent
        inherited = 0
        while parent is not None and parent.tag not in ("body", "html"):
            known = self._flags.get(parent.mem_id)
            if known is not None:
                inherited = known
                break
            chain.append(parent)
            parent = parent.parent
        for ancestor in reversed(chain):
            inherited |= self._own(ancestor)
            self._flags[ancestor.mem_id] = inherited
        return inherited


def _block_text(node: LexborNode) -> str:
    if node.tag == "pre":
        return "\n".join(line.rstrip() for line in node.text().strip("\n").split("\n"))
    if node.tag != "li":
        return _words(node)
    text = _own_text(node) if _read_by_item(node) else _words(node)
    return f"- {text}" if text else text


def _add(items: list[outline.Item], node: LexborNode, enclosing: int) -> None:
    """One heading or block of the page, unless something enclosing it already holds its text."""
    tag = node.tag
    if tag in _HEADINGS:
        if enclosing & _HEADING:
            return  # a heading inside a heading: its text is already the outer one's
        text = _words(node)
        if text and enclosing & _ADMONITION:
            items.append(outline.Item(outline.TEXT, f"{text}:"))
        elif text:
            items.append(outline.Item(outline.HEADING, text, level=_HEADINGS[tag]))
        return
    if enclosing & _BLOCK:
        return
    text = _block_text(node)
    if text:
        items.append(outline.Item(outline.TEXT, text))


def extract_page(file: SourceFile, raw: bytes) -> _Page:
    if b"\x00" in raw[:8192]:
        raise ParseError("binary file (NUL bytes), not HTML")
    prescan(raw)
    tree = LexborHTMLParser(raw)
    title_node = tree.css_first("title")
    title = _clean(title_node.text()) if title_node else ""
    body = tree.body
    if body is None:
        raise ParseError("no <body>")
    for node in body.css(_STRIP):
        node.decompose()
    items: list[outline.Item] = []
    ancestry = _Ancestry()
    nodes = body.css(_SELECT)
    if len(nodes) > MAX_BLOCKS:  # each costs Python time; a manual's page has a few thousand
        raise ParseError(f"HTML page has {len(nodes):,} headings and blocks; the limit is {MAX_BLOCKS:,}")
    for node in nodes:
        budget.tick()
        _add(items, node, ancestry.of(node))
    if not title:
        title = next((item.text for item in items if item.kind == outline.HEADING), "")
    # Only a page read item by item gets a new fingerprint; every other page stays as stored.
    nested = (_NESTED_LISTS,) if any(_read_by_item(li) for li in body.css("li")) else ()
    return _Page(file=file, title=title, items=items, digest=fingerprint(raw, *nested))


def boilerplate(pages: list[_Page]) -> frozenset[str]:
    """The blocks a site repeats on its pages (menus, footers)."""
    if len(pages) < _REPEAT_MIN_PAGES:
        return frozenset()
    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({item.text for item in page.items if item.kind == outline.TEXT})
    threshold = max(_REPEAT_MIN_PAGES, int(len(pages) * _REPEAT_SHARE))
    return frozenset(text for text, count in counts.items() if count >= threshold)


def build_document(page: _Page, *, repeated: frozenset[str], source_type: str) -> ParsedDocument:
    title = page.title or page.file.slug
    kept = (item for item in page.items if item.kind != outline.TEXT or item.text not in repeated)
    sections = outline.sections(kept, title=title, strip=False)
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


def _extract(file: SourceFile) -> _Page:
    return extract_page(file, file.read_bytes())


def _build(page: _Page, repeated: frozenset[str], source_type: str) -> ParseResult:
    try:
        return budget.checked(build_document(page, repeated=repeated, source_type=source_type))
    except NavigationOnly as exc:
        return ParseFailure(str(page.file.path), str(exc), skipped=True)


def parse_files(files: list[SourceFile], *, source_type: str) -> Iterator[ParseResult]:
    pages: list[_Page] = []
    for file in files:
        page = budget.guarded(str(file.path), partial(_extract, file))
        if isinstance(page, ParseFailure):
            yield page
        else:
            pages.append(page)
    repeated = boilerplate(pages)
    for page in pages:
        yield budget.guarded(str(page.file.path), partial(_build, page, repeated, source_type))
