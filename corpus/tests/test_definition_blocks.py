"""A <dd> holding paragraphs, code examples or lists read block by block (CORPUS_HTML_DEFINITION_BLOCKS,
docs/decisions/0083): each is a line of the section, as anywhere else on the page, and no term
joins the heading path."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus.parsers import ParsedDocument, SourceFile, html
from corpus.tests.test_definition_lists import POSTGRES, SPHINX

FLASK = """<html><head><title>API</title></head><body><div class="body"><h1>API</h1>
<dl class="py class"><dt class="sig sig-object py" id="flask.Config">class flask.Config(root_path)</dt>
<dd><p>Works exactly like a dict. It is also possible to provide the values just before the call:</p>
<div class="highlight"><pre>DEBUG = True
SECRET_KEY = 'development key'
app.config.from_object(__name__)
</pre></div>
<dl class="field-list"><dt class="field-odd">Parameters:</dt>
<dd class="field-odd"><ul><li><p>root_path – path to which files are read relative from.</p></li>
<li><p>defaults – an optional dictionary of default values.</p></li></ul></dd></dl>
</dd></dl></div></body></html>"""


def _lines(tmp_path: Path, name: str, content: str) -> list[str]:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    results = list(html.parse_files([SourceFile(path=path, slug=path.stem)], source_type="doc"))
    assert len(results) == 1 and isinstance(results[0], ParsedDocument), results
    return [line for section in results[0].sections for line in section.text.split("\n") if line.strip()]


@pytest.fixture
def blocks_on(settings: pytest.FixtureRequest) -> None:
    settings.CORPUS_HTML_DEFINITION_BLOCKS = True


@pytest.mark.usefixtures("blocks_on")
def test_a_definitions_paragraphs_and_example_are_lines_of_their_own(tmp_path: Path) -> None:
    lines = _lines(tmp_path, "api.html", FLASK)
    assert "Works exactly like a dict. It is also possible to provide the values just before the call:" in lines
    # The example keeps its own lines: no sentence of prose runs into `DEBUG = True`.
    assert "DEBUG = True" in lines and "app.config.from_object(__name__)" in lines
    assert "- root_path – path to which files are read relative from." in lines


def test_off_a_definition_is_one_line(tmp_path: Path) -> None:
    lines = _lines(tmp_path, "api.html", FLASK)
    assert not any(line == "DEBUG = True" for line in lines)
    assert any("just before the call: DEBUG = True" in line for line in lines)


@pytest.mark.usefixtures("blocks_on")
def test_the_term_stays_a_line_of_its_section_and_out_of_the_heading_path(tmp_path: Path) -> None:
    path = tmp_path / "runtime-config-resource.html"
    path.write_text(POSTGRES, encoding="utf-8")
    (document,) = html.parse_files([SourceFile(path=path, slug=path.stem)], source_type="doc")
    assert isinstance(document, ParsedDocument)
    memory = next(s for s in document.sections if s.heading_path[-1] == "20.4.1. Memory")
    lines = memory.text.split("\n")
    term = lines.index("work_mem ( integer)")  # the block-joining space, as stored today
    assert lines[term + 1].startswith("Sets the base maximum amount of memory")
    assert lines[term + 2] == "Hash-based operations are generally more sensitive to memory availability."
    assert not any("work_mem" in part for s in document.sections for part in s.heading_path)


@pytest.mark.usefixtures("blocks_on")
def test_only_pages_with_such_a_definition_get_a_new_fingerprint(tmp_path: Path, settings) -> None:
    plain = "<html><head><title>T</title></head><body><h1>T</h1><dl><dt>a</dt><dd>inline only</dd></dl></body></html>"
    digests = {}
    for on in (False, True):
        settings.CORPUS_HTML_DEFINITION_BLOCKS = on
        for name, content in (("plain.html", plain), ("sphinx.html", SPHINX)):
            path = tmp_path / name
            path.write_text(content, encoding="utf-8")
            digests[name, on] = html.extract_page(SourceFile(path=path, slug=path.stem), path.read_bytes()).digest
    assert digests["plain.html", False] == digests["plain.html", True]
    assert digests["sphinx.html", False] != digests["sphinx.html", True]
