"""Definition lists are read as lines of their section: a term is a line, its definition the
lines after it (definition-list terms as entities were measured and not adopted,
docs/decisions/0041, 0080)."""

from __future__ import annotations

from pathlib import Path

from corpus.parsers import ParsedDocument, ParseFailure, SourceFile, fingerprint, html, markdown

WORK_MEM = (
    "Sets the base maximum amount of memory to be used by a query operation (such as a sort or hash table) "
    "before writing to temporary disk files. If this value is specified without units, it is taken as "
    "kilobytes. The default value is four megabytes (<code class=\"literal\">4MB</code>)."
)
POSTGRES = f"""<html><head><title>20.4. Resource Consumption</title></head><body>
<div class="sect1"><h2 class="title">20.4. Resource Consumption</h2>
<div class="sect2"><h3 class="title">20.4.1. Memory</h3>
<div class="variablelist"><dl class="variablelist">
<dt id="GUC-SHARED-BUFFERS"><span class="term"><code class="varname">shared_buffers</code>
 (<code class="type">integer</code>) <a id="id-1.6.7.7.2.2.1.1.3" class="indexterm"></a></span></dt>
<dd><p>Sets the amount of memory the database server uses for shared memory buffers. The default is
typically 128 megabytes (<code class="literal">128MB</code>), but might be less if your kernel settings
will not support it (as determined during initdb). This setting must be at least 128 kilobytes.</p></dd>
<dt id="GUC-WORK-MEM"><span class="term"><code class="varname">work_mem</code>
 (<code class="type">integer</code>)</span></dt>
<dd><p>{WORK_MEM}</p><p>Hash-based operations are generally more sensitive to memory availability.</p></dd>
</dl></div></div></div>
<div class="sect2"><h3 class="title">20.4.2. Disk</h3><p>Disk settings follow.</p></div>
</body></html>"""

GLOSSARY_MD = """# Glossary

Terms used across the dashboard.

Chargeback
: A reversal of a card payment started by the cardholder's bank. Each chargeback costs a $15 fee,
  refunded if you win the dispute, and you have seven days to respond with evidence such as receipts,
  delivery confirmations and the customer's own messages.

Payout
: Money sent to your bank.

After the list, plain text again.
"""


def _parse_html(tmp_path: Path, name: str, content: str | bytes) -> ParsedDocument:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    [result] = list(html.parse_files([SourceFile(path=path, slug=path.stem)], source_type="doc"))
    assert isinstance(result, ParsedDocument), result
    return result


def test_a_definition_list_is_read_as_lines_of_its_section(tmp_path: Path) -> None:
    doc = _parse_html(tmp_path, "runtime-config-resource.html", POSTGRES)
    assert doc.fingerprint == fingerprint(POSTGRES.encode())
    memory = [s for s in doc.sections if s.heading_path[-1] == "20.4.1. Memory"]
    assert len(memory) == 1
    lines = memory[0].text.split("\n")
    assert lines[0] == "shared_buffers ( integer)"  # the dt, its elements joined by a space
    assert lines[2] == "work_mem ( integer)" and lines[3].startswith("Sets the base maximum") and len(lines) == 4
    path = tmp_path / "glossary.md"
    path.write_text(GLOSSARY_MD)
    [md] = list(markdown.parse_files([SourceFile(path=path, slug="glossary")], source_type="doc"))
    assert isinstance(md, ParsedDocument) and [s.heading_path for s in md.sections] == [("Glossary",)]


def test_an_empty_definition_keeps_its_term_as_text(tmp_path: Path) -> None:
    """Sphinx's django-admin options carry an empty <dd> and describe the option after the list."""
    page = ("<html><body><h1>check</h1><dl class='django-admin-option'><dt id='cmdoption-check-tag'>--tag TAGS"
            "</dt><dd></dd></dl><p>The system check framework performs many checks.</p></body></html>")
    doc = _parse_html(tmp_path, "check.html", page)
    assert [(s.heading_path, s.text) for s in doc.sections] == [
        (("check",), "--tag TAGS\nThe system check framework performs many checks.")
    ]
    assert not isinstance(doc, ParseFailure)
