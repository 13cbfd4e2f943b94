"""PDF with pypdf: one section per page, so a chunk never spans two pages and every citation
can name its page. Lines repeated on most pages (running headers, footers, page numbers) are
dropped before chunking."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from functools import partial

from corpus.parsers import ParsedDocument, ParseError, ParseResult, Section, SourceFile, budget, fingerprint

_PAGE_NUMBER = re.compile(r"^\s*(page\s*)?\d+(\s*(of|/)\s*\d+)?\s*$", re.IGNORECASE)
_REPEAT_SHARE = 0.6
_MAX_PAGES = 2000
_MAX_CHARACTERS = 20_000_000  # ~4 million words: a book series, not a manual


def _storable(text: str) -> str:
    """A font can map glyphs to NUL or to half a UTF-16 pair; PostgreSQL text holds neither, and
    one odd glyph must not refuse a whole manual."""
    text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _page_texts(raw: bytes) -> tuple[str, list[str]]:
    import io

    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError, PdfReadError, PyPdfError

    try:
        reader = PdfReader(io.BytesIO(raw), strict=False)
        if reader.is_encrypted:
            raise ParseError("encrypted PDF: decrypt it before ingesting")
        if len(reader.pages) > _MAX_PAGES:
            raise ParseError(f"PDF has {len(reader.pages)} pages, over the {_MAX_PAGES}-page limit")
        title = ""
        if reader.metadata and reader.metadata.title:
            title = _storable(str(reader.metadata.title)).strip()
        texts = []
        extracted = 0
        for page in reader.pages:
            budget.tick()  # between pages: pypdf cannot be interrupted inside one
            texts.append(_storable(page.extract_text() or ""))
            extracted += len(texts[-1])
            if extracted > _MAX_CHARACTERS:
                raise ParseError(f"PDF text passes {_MAX_CHARACTERS:,} characters; split the file")
    except ParseError:
        raise
    except LimitReachedError as exc:
        # pypdf caps what one stream may inflate to: a small file that claims gigabytes.
        raise ParseError(f"PDF stream inflates past pypdf's safety limit (decompression bomb?): {exc}") from exc
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError,
            RecursionError) as exc:
        raise ParseError(f"unreadable PDF: {exc.__class__.__name__}: {exc}") from exc
    return title, texts


def strip_running_lines(pages: list[str]) -> list[list[str]]:
    split = [[line.strip() for line in text.split("\n") if line.strip()] for text in pages]
    counts: Counter[str] = Counter()
    for lines in split:
        counts.update(set(lines))
    threshold = max(2, int(len(pages) * _REPEAT_SHARE + 0.5)) if len(pages) >= 3 else len(pages) + 1
    return [
        [line for line in lines if counts[line] < threshold and not _PAGE_NUMBER.match(line)] for lines in split
    ]


def parse_pdf(file: SourceFile, source_type: str) -> ParsedDocument:
    raw = file.read_bytes()
    if not raw.startswith(b"%PDF"):
        raise ParseError("not a PDF (no %PDF header)")
    meta_title, pages = _page_texts(raw)
    kept = strip_running_lines(pages)
    title = meta_title or file.slug.rsplit("/", 1)[-1].replace("-", " ").replace("_", " ").title()
    sections = [
        Section(heading_path=(title, f"Page {number}"), text="\n".join(lines), page=number)
        for number, lines in enumerate(kept, start=1)
        if lines
    ]
    if not sections:
        raise ParseError("no extractable text (a scanned PDF needs OCR first)")
    return budget.checked(ParsedDocument(
        slug=file.slug,
        title=title,
        source_type="pdf" if source_type == "doc" else source_type,
        sections=sections,
        source_path=str(file.path),
        fingerprint=fingerprint(raw),
    ))


def parse_files(files: list[SourceFile], *, source_type: str) -> Iterator[ParseResult]:
    for file in files:
        yield budget.guarded(str(file.path), partial(parse_pdf, file, source_type))
