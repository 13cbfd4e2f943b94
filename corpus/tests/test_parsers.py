from __future__ import annotations

from pathlib import Path

import pytest

from corpus.parsers import ParsedDocument, ParseFailure, SourceFile
from corpus.parsers import entries, html, markdown, pdf, text
from corpus.tests.pdfs import make_pdf


def _file(tmp_path: Path, name: str, content: str | bytes) -> SourceFile:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return SourceFile(path=path, slug=Path(name).with_suffix("").as_posix())


def _one(results: list[ParsedDocument | ParseFailure]) -> ParsedDocument:
    assert len(results) == 1 and isinstance(results[0], ParsedDocument), results
    return results[0]


MD = """---
title: Invoices
version: v2.3.1
effective_date: 2025-03-01
audience: customer
supersedes: billing/invoices-2024
---
# Invoices

Intro text.

## Proration

When you upgrade mid-cycle we prorate.

```
# not a heading inside a fence
```

### Examples

Example text.

## Refunds

Refunds take 5 days.
"""


def test_markdown_front_matter_and_heading_paths(tmp_path: Path) -> None:
    doc = _one(list(markdown.parse_files([_file(tmp_path, "billing/invoices.md", MD)], source_type="doc")))
    assert doc.slug == "billing/invoices"
    assert (doc.title, doc.version, str(doc.effective_date), doc.audience, doc.supersedes) == (
        "Invoices", "v2.3.1", "2025-03-01", "customer", "billing/invoices-2024")
    paths = [s.heading_path for s in doc.sections]
    assert paths == [
        ("Invoices",),
        ("Invoices", "Proration"),
        ("Invoices", "Proration", "Examples"),
        ("Invoices", "Refunds"),
    ]
    assert "# not a heading inside a fence" in doc.sections[1].text


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("---\ntitle: [unclosed\n---\nbody", "front matter is not valid YAML"),
        ("---\ntitle: x\nbody without end", "never closed"),
        ("", "empty"),
        (b"\x00\x01binary", "binary"),
        (b"caf\xe9 latin-1", "not UTF-8"),
    ],
)
def test_markdown_bad_files_fail_with_a_reason(tmp_path: Path, content: str | bytes, reason: str) -> None:
    [result] = list(markdown.parse_files([_file(tmp_path, "bad.md", content)], source_type="doc"))
    assert isinstance(result, ParseFailure) and reason in result.reason


def _site_page(title: str, body: str) -> str:
    return f"""<html><head><title>{title}</title><script>var x = "script text";</script></head><body>
<div class="navheader"><a href="prev.html">Prev</a> <a href="up.html">Up</a></div>
<nav><ul><li>Home</li><li>Guides</li></ul></nav>
<div class="breadcrumbs">Docs » Guides</div>
<div class="main">{body}</div>
<div class="legal"><p>Copyright 2025 Example Corp. All rights reserved.</p></div>
<footer>Built with love</footer></body></html>"""


def test_html_site_strips_navigation_and_repeated_text(tmp_path: Path) -> None:
    files = [
        _file(tmp_path, f"page{i}.html", _site_page(f"Page {i}", f"<h1>Page {i}</h1><p>Unique body {i}.</p>"
                                                   f"<h2>Details</h2><p>More about topic {i}.</p>"
                                                   f'<div class="note"><h3>Note</h3><p>Careful with {i}.</p></div>'
                                                   f"<h3>Deep</h3><ul><li>item {i}</li></ul>"))
        for i in range(4)
    ]
    docs = [r for r in html.parse_files(files, source_type="doc") if isinstance(r, ParsedDocument)]
    assert len(docs) == 4
    page = docs[0]
    all_text = "\n".join(s.text for s in page.sections)
    for boilerplate in ("Prev", "Home", "Docs »", "Copyright", "Built with love", "script text"):
        assert boilerplate not in all_text
    assert page.title == "Page 0"
    assert [s.heading_path for s in page.sections] == [
        ("Page 0",), ("Page 0", "Details"), ("Page 0", "Details", "Deep")
    ]
    assert "Careful with 0." in page.sections[1].text  # a note label does not open a section
    assert "- item 0" in page.sections[2].text


def test_html_navigation_only_page_is_skipped_not_failed(tmp_path: Path) -> None:
    page = _file(tmp_path, "toc.html", '<html><body><div class="toc"><dl><dt>1. Intro</dt></dl></div></body></html>')
    [result] = list(html.parse_files([page], source_type="doc"))
    assert isinstance(result, ParseFailure) and result.skipped


DOCBOOK = Path("/usr/share/doc/postgresql-doc-15/html")


@pytest.mark.skipif(not DOCBOOK.exists(), reason="postgresql-doc-15 is not installed (make pgdocs)")
def test_real_docbook_pages_have_right_heading_paths_and_no_navigation() -> None:
    names = ["datatype-numeric", "sql-vacuum", "routine-vacuuming", "backup-dump"]
    files = [SourceFile(DOCBOOK / f"{n}.html", n) for n in names]
    docs = {d.slug: d for d in html.parse_files(files, source_type="doc") if isinstance(d, ParsedDocument)}
    serial = [s for s in docs["datatype-numeric"].sections if "Serial Types" in " > ".join(s.heading_path)]
    assert serial and serial[0].heading_path == ("8.1. Numeric Types", "8.1.4. Serial Types")
    assert "smallserial" in serial[0].text
    for doc in docs.values():
        text = "\n".join(s.text for s in doc.sections)
        assert "Prev Up" not in text and "Submit correction" not in text


def test_pdf_pages_and_running_lines(tmp_path: Path) -> None:
    pages = [["ACME Manual", f"Body of page {n}.", f"Page {n} of 3"] for n in (1, 2, 3)]
    pages[1].insert(1, "Chargebacks cost $15 each.")
    [doc] = list(pdf.parse_files([_file(tmp_path, "guide.pdf", make_pdf(pages, title="Billing Guide"))],
                                 source_type="doc"))
    assert isinstance(doc, ParsedDocument)
    assert doc.title == "Billing Guide" and doc.source_type == "pdf"
    assert [s.page for s in doc.sections] == [1, 2, 3]
    joined = "\n".join(s.text for s in doc.sections)
    assert "ACME Manual" not in joined and "of 3" not in joined
    assert "Chargebacks cost $15 each." in doc.sections[1].text


def test_pdf_encrypted_broken_and_fake_are_rejected(tmp_path: Path) -> None:
    import io

    from pypdf import PdfReader, PdfWriter

    good = make_pdf([["Secret text."]])
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(good)))
    writer.encrypt("pw")
    buffer = io.BytesIO()
    writer.write(buffer)
    cases = {
        "enc.pdf": (buffer.getvalue(), "encrypted"),
        "broken.pdf": (good[:60], "unreadable"),
        "fake.pdf": (b"hello, not a pdf", "not a PDF"),
    }
    for name, (content, reason) in cases.items():
        [result] = list(pdf.parse_files([_file(tmp_path, name, content)], source_type="doc"))
        assert isinstance(result, ParseFailure), name
        assert reason in result.reason or "no extractable text" in result.reason, (name, result.reason)


def test_entries_json_and_csv(tmp_path: Path) -> None:
    changelog = _file(tmp_path, "changelog.json", '[{"id": "CL-1", "title": "v2", "date": "2025-01-02",'
                      ' "version": "v2.0", "body": "Retries now 8.\\n### Fixes\\nFixed E1042."}]')
    tickets = _file(tmp_path, "tickets.csv", "id,subject,question,resolution,resolved_at\n"
                    "T-1,Login fails,I cannot log in,Reset the SSO cache,2025-02-03\n")
    [entry] = list(entries.parse_files([changelog], source_type="doc"))
    assert isinstance(entry, ParsedDocument)
    assert (entry.slug, entry.source_type, entry.version) == ("CL-1", "changelog", "v2.0")
    assert entry.sections[-1].heading_path == ("v2", "Fixes")
    [ticket] = list(entries.parse_files([tickets], source_type="ticket"))
    assert isinstance(ticket, ParsedDocument)
    assert [s.heading_path for s in ticket.sections] == [("Login fails", "Question"), ("Login fails", "Resolution")]


def test_entries_errors_name_the_problem(tmp_path: Path) -> None:
    bad = _file(tmp_path, "changelog.json", '[{"title": "no id"}, {"id": "A", "body": "x"}, {"id": "A", "body": "y"}]')
    results = list(entries.parse_files([bad], source_type="changelog"))
    reasons = [r.reason for r in results if isinstance(r, ParseFailure)]
    assert reasons == ["entry without an id", "duplicate entry id A"]
    unknown = _file(tmp_path, "data.json", "[]")
    [result] = list(entries.parse_files([unknown], source_type="doc"))
    assert isinstance(result, ParseFailure) and "--source-type" in result.reason


def test_text_file(tmp_path: Path) -> None:
    [doc] = list(text.parse_files([_file(tmp_path, "faq.txt", "Shipping FAQ\nWe ship in 2 days.")], source_type="doc"))
    assert isinstance(doc, ParsedDocument)
    assert doc.title == "Shipping FAQ" and doc.sections[0].text == "We ship in 2 days."
