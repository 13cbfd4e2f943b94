"""Definition-list terms as entities: the term joins the heading path, its id is the anchor
(docs/decisions/0041-definition-list-entities.md). Off by default (CORPUS_DEFINITION_ENTITIES);
these tests turn it on, except those that pin what off means."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from corpus.ingest.chunking import chunk_sections
from corpus.encoders.embedding import Encoder
from corpus.parsers import ParsedDocument, ParseFailure, Section, SourceFile, fingerprint, html, markdown


@pytest.fixture(autouse=True)
def entities_on(settings: pytest.FixtureRequest) -> None:
    settings.CORPUS_DEFINITION_ENTITIES = True

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

SPHINX = """<html><head><title>Model reference</title></head><body><div class="body">
<h1>Model reference</h1><p>How models are described.</p>
<dl class="py class">
<dt class="sig sig-object py" id="django.db.models.Model">
<em class="property">class </em><code class="sig-prename descclassname">django.db.models.</code><code class="sig-name
descname">Model</code>(<em>**kwargs</em>)<a class="reference internal" href="../_modules/x.html"><span
class="viewcode-link">[source]</span></a><a class="headerlink" href="#django.db.models.Model">¶</a></dt>
<dd><p>The base class of every model. Each attribute of a subclass represents a database field, and
Django gives it an automatically-generated database-access API for the rows of its table.</p>
<dl class="py method">
<dt class="sig sig-object py" id="django.db.models.Model.full_clean">
<code class="sig-name descname">full_clean</code>(<em>exclude=None</em>, <em>validate_unique=True</em>)<a
class="headerlink" href="#django.db.models.Model.full_clean">¶</a></dt>
<dd><p>This method calls Model.clean_fields(), Model.clean(), and Model.validate_unique() (if
validate_unique is True), in that order and raises a ValidationError that has a message_dict attribute
containing errors from all three stages.</p></dd></dl>
<p>After the methods, the class description goes on.</p>
</dd></dl>
<p>Text after the class.</p>
</div></body></html>"""

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


def _anchor(section: Section) -> str | None:
    return getattr(section, "anchor", None)


def _entity(doc: ParsedDocument, term: str) -> Section:
    found = [s for s in doc.sections if s.heading_path[-1] == term]
    assert len(found) == 1, [s.heading_path for s in doc.sections]
    return found[0]


def test_postgres_parameters_are_entities_with_their_anchors(tmp_path: Path) -> None:
    doc = _parse_html(tmp_path, "runtime-config-resource.html", POSTGRES)
    work_mem = _entity(doc, "work_mem (integer)")
    assert work_mem.heading_path == ("20.4. Resource Consumption", "20.4.1. Memory", "work_mem (integer)")
    assert _anchor(work_mem) == "GUC-WORK-MEM"
    assert work_mem.text.startswith("Sets the base maximum amount of memory") and "4MB" in work_mem.text
    assert "Hash-based operations" in work_mem.text and "shared memory buffers" not in work_mem.text
    assert _anchor(_entity(doc, "shared_buffers (integer)")) == "GUC-SHARED-BUFFERS"
    # Leaving the list leaves the entity: the next heading's text is under that heading only.
    assert _entity(doc, "20.4.2. Disk").heading_path == ("20.4. Resource Consumption", "20.4.2. Disk")


def test_sphinx_signatures_nest_and_drop_their_link_text(tmp_path: Path) -> None:
    doc = _parse_html(tmp_path, "models.html", SPHINX)
    cls = "class django.db.models.Model(**kwargs)"
    method = _entity(doc, "full_clean(exclude=None, validate_unique=True)")
    assert method.heading_path == ("Model reference", cls, method.heading_path[-1])
    assert _anchor(method) == "django.db.models.Model.full_clean"
    assert "validate_unique is True" in method.text
    opening, after_methods = [s for s in doc.sections if s.heading_path[-1] == cls]
    assert _anchor(opening) == "django.db.models.Model" and "The base class of every model" in opening.text
    assert after_methods.text == "After the methods, the class description goes on."
    assert doc.sections[-1].heading_path == ("Model reference",)
    assert doc.sections[-1].text == "Text after the class."
    assert not any("[source]" in part or "¶" in part for s in doc.sections for part in s.heading_path)


def test_markdown_definition_list_terms_are_entities(tmp_path: Path) -> None:
    path = tmp_path / "glossary.md"
    path.write_text(GLOSSARY_MD)
    [doc] = list(markdown.parse_files([SourceFile(path=path, slug="glossary")], source_type="doc"))
    assert isinstance(doc, ParsedDocument), doc
    chargeback = _entity(doc, "Chargeback")
    assert chargeback.heading_path == ("Glossary", "Chargeback")
    assert chargeback.text.startswith("A reversal of a card payment") and "seven days" in chargeback.text
    # A one-line definition stays a line of its parent: no section of five words.
    rest = doc.sections[-1]
    assert rest.heading_path == ("Glossary",)
    assert rest.text.split("\n") == ["Payout", "Money sent to your bank.", "", "After the list, plain text again."]


def test_a_glossary_of_one_liners_stays_a_few_sections(tmp_path: Path) -> None:
    entries = "".join(f"<dt id='t{i}'>term {i}</dt><dd>meaning number {i}.</dd>" for i in range(3_000))
    doc = _parse_html(tmp_path, "glossary.html", f"<html><body><h1>Glossary</h1><dl>{entries}</dl></body></html>")
    assert [s.heading_path for s in doc.sections] == [("Glossary",)]
    assert "term 2999\nmeaning number 2999." in doc.sections[0].text


def test_a_big_definition_list_parses_within_the_budget(tmp_path: Path) -> None:
    body = "Sets how much of the thing the server may use before it spills to disk, in kilobytes. " * 3
    entries = "".join(f"<dt id='P-{i}'>param_{i} (integer)</dt><dd><p>{body}</p></dd>" for i in range(12_000))
    started = time.thread_time()
    doc = _parse_html(tmp_path, "big.html", f"<html><body><h1>Params</h1><dl>{entries}</dl></body></html>")
    assert time.thread_time() - started < 3.0  # the parse budget of this 3.8 MB page is 8.8 s
    assert len(doc.sections) == 12_000 and _anchor(doc.sections[-1]) == "P-11999"


def test_nested_definitions_stop_joining_the_path_at_the_depth_cap(tmp_path: Path) -> None:
    text = "a definition long enough to be an entity of its own, " * 5
    nested = "<dl><dt>t</dt><dd><p>" + text + "</p>"
    page = f"<html><body><h1>Deep</h1>{nested * 200}{'</dd></dl>' * 200}</body></html>"
    started = time.thread_time()
    doc = _parse_html(tmp_path, "deep.html", page)
    assert time.thread_time() - started < 1.0
    assert max(len(s.heading_path) for s in doc.sections) == 1 + 4  # the title, then four terms


def test_chunks_split_at_entities_and_carry_the_anchor(tmp_path: Path, encoder: Encoder) -> None:
    doc = _parse_html(tmp_path, "runtime-config-resource.html", POSTGRES)
    drafts = chunk_sections(doc.sections, counter=encoder, target=200)
    by_anchor = {d.anchor: d for d in drafts if getattr(d, "anchor", "")}
    assert set(by_anchor) == {"GUC-SHARED-BUFFERS", "GUC-WORK-MEM"}
    work_mem = by_anchor["GUC-WORK-MEM"]
    assert work_mem.heading_path.endswith("20.4.1. Memory > work_mem (integer)")
    assert "shared memory buffers" not in work_mem.content


def test_turning_entities_on_changes_the_fingerprint(tmp_path: Path, settings: pytest.FixtureRequest) -> None:
    """The content hash is built on this fingerprint: turning entities on or off re-chunks what is stored."""
    on = _parse_html(tmp_path, "a.html", POSTGRES).fingerprint
    settings.CORPUS_DEFINITION_ENTITIES = False
    off = _parse_html(tmp_path, "a.html", POSTGRES).fingerprint
    assert on != off and off == fingerprint(POSTGRES.encode())  # off: the fingerprint of before


def test_off_reads_a_definition_list_as_before(tmp_path: Path, settings: pytest.FixtureRequest) -> None:
    settings.CORPUS_DEFINITION_ENTITIES = False
    doc = _parse_html(tmp_path, "runtime-config-resource.html", POSTGRES)
    memory = [s for s in doc.sections if s.heading_path[-1] == "20.4.1. Memory"]
    assert len(memory) == 1 and _anchor(memory[0]) is None
    lines = memory[0].text.split("\n")
    assert lines[0] == "shared_buffers ( integer)"  # the dt as the old parser cleaned it
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
