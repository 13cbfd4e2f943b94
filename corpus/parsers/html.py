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

from django.conf import settings
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
# A Sphinx signature's "[source]" link is no part of the term the heading path shows.
_STRIP_WITH_ENTITIES = f"{_STRIP}, .viewcode-link"
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = {"p", "pre", "li", "dt", "dd", "td", "th", "blockquote", "caption", "figcaption"}
_SELECT = ", ".join([*_HEADINGS, *_BLOCKS])
# A block seen on at least this share of a site's pages (and on 3+ pages) is boilerplate.
_REPEAT_SHARE = 0.5
_REPEAT_MIN_PAGES = 3
# Where a build joins a page's title to the site's name: Sphinx " — ", MkDocs and most CMSs " - "
# or " | ".
_TITLE_SEPARATORS = (" — ", " – ", " | ", " - ", " · ")


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
_SPACE_AFTER_OPEN = re.compile(r"([(\[])\s+")


def _clean(text: str) -> str:
    # Elements joined by a space, and source markup that breaks lines anywhere, leave a space
    # before a full stop or a closing bracket.
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(text.split()))


# With CORPUS_HTML_INLINE_WORDS, only the edges of these elements part words. Any other element
# (span, em, code, a) is read as written: a highlighter's
# `<span>argparse</span><span>.</span><span>ArgumentParser</span>` is one word, and
# `“<span>logical</span>”` keeps its quotes on the word (docs/decisions/0092).
_WORD_BREAKS = frozenset({*_HEADINGS, *_BLOCKS, "div", "section", "article", "main", "br", "hr", "ul", "ol", "dl",
                          "table", "thead", "tbody", "tfoot", "tr", "figure", "details", "summary", "address"})
# Part of the fingerprint of a page whose text reads otherwise than when inline elements were
# joined by a space: that page is read again on its next ingest, every other stays as stored.
_INLINE_WORDS = "inline-words-1"


def _words(node: LexborNode, *, skip: frozenset[str] = frozenset()) -> str:
    """The node's text without the elements in `skip`. With CORPUS_HTML_INLINE_WORDS, as a browser
    lays it out in one line: inline elements joined as written, a space at the edges of blocks;
    a loop, not recursion, as a page may nest up to MAX_DEPTH elements. Off, `_spaced`."""
    if not settings.CORPUS_HTML_INLINE_WORDS:
        return _spaced(node, skip=skip)
    parts: list[str] = []
    stack: list[LexborNode | str] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        if item.tag == "-text":
            parts.append(item.text_content or "")
            continue
        if item is not node and item.tag in _WORD_BREAKS:
            parts.append(" ")
            stack.append(" ")
        stack.extend(reversed([child for child in item.iter(include_text=True) if child.tag not in skip]))
    return _clean("".join(parts))


def _spaced(node: LexborNode, *, skip: frozenset[str] = frozenset()) -> str:
    """Every element's text joined by a space: the reading while CORPUS_HTML_INLINE_WORDS is off."""
    if not skip:
        return _clean(node.text(separator=" "))
    return _clean(" ".join((child.text_content if child.tag == "-text" else child.text(separator=" ")) or ""
                           for child in node.iter(include_text=True) if child.tag not in skip))


_ADMONITIONS = ("note", "warning", "tip", "caution", "important", "admonition", "callout")
# Flags of a node and its ancestors up to <body>; above them, how many definitions enclose it.
_ADMONITION, _BLOCK, _HEADING = 1, 2, 4
_DEPTH_SHIFT, _FLAGS = 3, 7
# A <dd> that opens with one of these holds blocks of its own, read one by one under its term;
# any other <dd> is one block, as it always was.
_OPENS_BLOCKS = frozenset({*_HEADINGS, *_BLOCKS, "div", "dl", "ul", "ol", "table", "section", "figure"})


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


def _holds_blocks(node: LexborNode) -> bool:
    child = node.child
    while child is not None and child.tag == "-text" and not (child.text_content or "").strip():
        child = child.next
    return child is not None and child.tag in _OPENS_BLOCKS


class _Ancestry:
    """What encloses a node (an admonition box, a block, a heading, definitions), memoised per node.

    Walking every node's parents afresh cost depth × nodes: 8,000 nested sections with a
    heading each took 8 s, 32,000 took minutes. With the memo each node is visited once."""

    def __init__(self, *, entities: bool) -> None:
        self._flags: dict[int, int] = {}
        self.entities = entities

    def _own(self, node: LexborNode) -> int:
        tag = node.tag
        if tag == "dd" and self.entities and _holds_blocks(node):
            flags = 1 << _DEPTH_SHIFT  # a container: its blocks are read under its term
        elif _read_by_item(node):
            flags = 0  # its nested items are blocks of their own
        else:
            flags = _BLOCK if tag in _BLOCKS else _HEADING if tag in _HEADINGS else 0
        classes = (node.attributes.get("class") or "").lower().split()
        return flags | (_ADMONITION if any(c in _ADMONITIONS for c in classes) else 0)

    def of(self, node: LexborNode) -> int:
        """Flags of node's strict ancestors below <body>, with the count of enclosing definitions."""
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
            own = self._own(ancestor)
            inherited = ((inherited | own) & _FLAGS) | ((inherited >> _DEPTH_SHIFT) + (own >> _DEPTH_SHIFT)) << _DEPTH_SHIFT
            self._flags[ancestor.mem_id] = inherited
        return inherited


def _block_text(node: LexborNode) -> str:
    if node.tag == "pre":
        return "\n".join(line.rstrip() for line in node.text().strip("\n").split("\n"))
    if node.tag != "li":
        return _words(node)
    text = _own_text(node) if _read_by_item(node) else _words(node)
    return f"- {text}" if text else text


def _term_text(node: LexborNode) -> str:
    """A term as the heading path reads it: "work_mem (integer)", "Model(**kwargs)".

    Read with a space between elements, a Sphinx signature (`dt.sig`) needs its own separator:
    it writes its own spaces between the pieces, which the joining space would split
    ("Model (** kwargs)")."""
    if settings.CORPUS_HTML_INLINE_WORDS:
        return _SPACE_AFTER_OPEN.sub(r"\1", _words(node))
    classes = (node.attributes.get("class") or "").split()
    return _SPACE_AFTER_OPEN.sub(r"\1", _clean(node.text(separator="" if "sig" in classes else " ")))


def _add(items: list[outline.Item], node: LexborNode, enclosing: int, *, entities: bool) -> None:
    """One heading, term or block of the page, unless something enclosing it already holds its text."""
    tag = node.tag
    term = entities and tag == "dt"
    depth = enclosing >> _DEPTH_SHIFT
    if tag in _HEADINGS:
        if enclosing & _HEADING:
            return  # a heading inside a heading: its text is already the outer one's
        text = _words(node)
        if text and enclosing & _ADMONITION:
            items.append(outline.Item(outline.TEXT, f"{text}:", depth=depth))
        elif text:
            items.append(outline.Item(outline.HEADING, text, level=_HEADINGS[tag]))
        return
    if enclosing & _BLOCK or (entities and tag == "dd" and _holds_blocks(node)):
        return
    text = _term_text(node) if term else _block_text(node)
    if text and term:
        outline.add_term(items, text=text, depth=depth, anchor=node.attributes.get("id") or "")
    elif text:
        # A <dd> of inline text is the definition of the term before it: one level deeper.
        items.append(outline.Item(outline.TEXT, text, depth=depth + (entities and tag == "dd")))


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
    entities = outline.entities_enabled()
    for node in body.css(_STRIP_WITH_ENTITIES if entities else _STRIP):
        node.decompose()
    items: list[outline.Item] = []
    ancestry = _Ancestry(entities=entities)
    nodes = body.css(_SELECT)
    if len(nodes) > MAX_BLOCKS:  # each costs Python time; a manual's page has a few thousand
        raise ParseError(f"HTML page has {len(nodes):,} headings and blocks; the limit is {MAX_BLOCKS:,}")
    for node in nodes:
        budget.tick()
        _add(items, node, ancestry.of(node), entities=entities)
    if not title:
        title = next((item.text for item in items if item.kind == outline.HEADING), "")
    # Only a page read item by item, or one whose inline elements glue words (above), gets a new
    # fingerprint; every other page stays as stored.
    nested = (_NESTED_LISTS,) if any(_read_by_item(li) for li in body.css("li")) else ()
    # On, the page is read once more as a whole: about 0.2 s per 100 pages, against minutes of encoding.
    inline = (_INLINE_WORDS,) if settings.CORPUS_HTML_INLINE_WORDS and _words(body) != _spaced(body) else ()
    return _Page(file=file, title=title, items=items,
                 digest=fingerprint(raw, *inline, *nested, *outline.fingerprint_parts()))


@dataclass(frozen=True)
class Boilerplate:
    """What a site repeats on its pages: blocks (menus, footers) and its name in every title."""

    texts: frozenset[str] = frozenset()
    title_suffix: str = ""


def boilerplate(pages: list[_Page]) -> Boilerplate:
    if len(pages) < _REPEAT_MIN_PAGES:
        return Boilerplate()
    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({item.text for item in page.items if item.kind == outline.TEXT})
    threshold = max(_REPEAT_MIN_PAGES, int(len(pages) * _REPEAT_SHARE))
    return Boilerplate(texts=frozenset(text for text, count in counts.items() if count >= threshold),
                       title_suffix=_site_title_suffix(pages, threshold) if settings.CORPUS_HTML_SITE_TITLE_STRIP else "")


def _site_title_suffix(pages: list[_Page], threshold: int) -> str:
    """The site's name, when at least `threshold` titles end in the same one after a separator.
    The last separator: "os.path — Common pathname manipulations — Python 3.11 documentation"
    keeps its own dash. A page's own title shared by half a site is no name of the site."""
    counts: Counter[str] = Counter()
    for page in pages:
        at = max(page.title.rfind(separator) for separator in _TITLE_SEPARATORS)
        if at > 0:
            counts[page.title[at:]] += 1
    suffix, count = counts.most_common(1)[0] if counts else ("", 0)
    return suffix if count >= threshold else ""


def build_document(page: _Page, *, repeated: Boilerplate, source_type: str) -> ParsedDocument:
    title, digest = page.title or page.file.slug, page.digest
    suffix = repeated.title_suffix
    if suffix and title.endswith(suffix) and len(title) > len(suffix):
        # Only a page whose title changed gets a new fingerprint: the rest stays unchanged in store.
        title, digest = title[: -len(suffix)].rstrip(), fingerprint(page.digest, "site-title", suffix)
    kept = (item for item in page.items if item.kind != outline.TEXT or item.text not in repeated.texts)
    sections = outline.sections(kept, title=title, strip=False)
    if not sections:
        raise NavigationOnly("only navigation: nothing left after stripping menus and tables of contents")
    return ParsedDocument(
        slug=page.file.slug,
        title=title,
        source_type=source_type,
        sections=sections,
        source_path=str(page.file.path),
        fingerprint=digest,
    )


def _extract(file: SourceFile) -> _Page:
    return extract_page(file, file.read_bytes())


def _build(page: _Page, repeated: Boilerplate, source_type: str) -> ParseResult:
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
