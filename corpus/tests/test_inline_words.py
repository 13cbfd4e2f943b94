"""With CORPUS_HTML_INLINE_WORDS, inline elements are read as written and only block edges part
words (docs/decisions/0092).

A documentation build wraps every token of highlighted code in a `<span>` and every quoted word
in two; joining each element's text with a space stored "argparse. ArgumentParser ( prog = 'P')"
and "“ logical ”", which no answer should quote and no identifier search finds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corpus.parsers import ParsedDocument, SourceFile, fingerprint, html


@pytest.fixture(autouse=True)
def inline_words_on(settings: Any) -> None:
    settings.CORPUS_HTML_INLINE_WORDS = True


# As Sphinx writes a doctest inside a definition (python3.11-doc, library/argparse.html).
SPHINX_DD = """<html><head><title>argparse</title></head><body><dl class="py class">
<dt class="sig sig-object py" id="argparse.ArgumentParser"><em class="property">class </em>
<span class="sig-prename descclassname"><span class="pre">argparse.</span></span><span class="sig-name descname"><span class="pre">ArgumentParser</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">prog</span></span><span class="o"><span class="pre">=</span></span><span class="default_value"><span class="pre">None</span></span></em><span class="sig-paren">)</span></dt>
<dd>Create a new parser, for example: <span class="gp">&gt;&gt;&gt; </span><span class="n">parser</span> <span class="o">=</span> <span class="n">argparse</span><span class="o">.</span><span class="n">ArgumentParser</span><span class="p">(</span><span class="n">prog</span><span class="o">=</span><span class="s1">&#39;PROG&#39;</span><span class="p">)</span></dd>
</dl></body></html>"""

# As DocBook writes a quoted word and an option (postgresql-doc-15, amcheck.html, app-pgdump.html).
DOCBOOK = """<html><head><title>amcheck</title></head><body><h2>F.2. amcheck</h2>
<p>Certain functions verify that all B-Tree pages have items in <span class="quote">“<span class="quote">logical</span>”</span> order,
using <code class="filename">amcheck</code>'s checks (see <code class="option">--heapallindexed</code>).</p>
<p>Pass <code class="option">--host=</code><em class="replaceable"><code>host</code></em> to connect elsewhere.</p>
</body></html>"""

# Elements that are blocks to a reader part the words on either side, nested or not.
BLOCKS = """<html><head><title>Blocks</title></head><body><h1>Blocks</h1>
<ul><li><div>alpha</div><div>beta</div>gamma<br>delta</li></ul>
<table><tr><td><span>one</span></td><td><span>two</span></td></tr></table>
</body></html>"""


def _parse(tmp_path: Path, name: str, content: str) -> ParsedDocument:
    path = tmp_path / name
    path.write_text(content)
    [doc] = list(html.parse_files([SourceFile(path=path, slug=path.stem)], source_type="doc"))
    assert isinstance(doc, ParsedDocument), doc
    return doc


def _text(doc: ParsedDocument) -> str:
    return "\n".join(s.text for s in doc.sections)


def test_highlighted_code_in_a_definition_reads_as_the_code(tmp_path: Path, settings: Any) -> None:
    settings.CORPUS_DEFINITION_ENTITIES = True
    doc = _parse(tmp_path, "argparse.html", SPHINX_DD)
    assert ">>> parser = argparse.ArgumentParser(prog='PROG')" in _text(doc), _text(doc)
    assert "class argparse.ArgumentParser(prog=None)\n" in _text(doc)  # the signature, as its term


def test_a_quoted_word_keeps_its_quotes_and_an_option_its_value(tmp_path: Path) -> None:
    text = _text(_parse(tmp_path, "amcheck.html", DOCBOOK))
    assert "items in “logical” order" in text, text
    assert "amcheck's checks (see --heapallindexed)." in text
    assert "Pass --host=host to connect" in text


def test_block_edges_still_part_words(tmp_path: Path) -> None:
    text = _text(_parse(tmp_path, "blocks.html", BLOCKS))
    assert "- alpha beta gamma delta" in text, text
    assert "one" in text and "two" in text and "onetwo" not in text


def test_a_page_whose_words_read_otherwise_is_read_again_and_no_other(tmp_path: Path) -> None:
    """The ingest skips a page whose fingerprint is stored: a page the new reading changes gets a
    new one, so its stale text is replaced; a page it leaves alone keeps its own."""
    assert _parse(tmp_path, "amcheck.html", DOCBOOK).fingerprint == fingerprint(DOCBOOK.encode(), "inline-words-1")
    plain = "<html><head><title>Plain</title></head><body><h1>Plain</h1><p>Nothing inline here.</p></body></html>"
    assert _parse(tmp_path, "plain.html", plain).fingerprint == fingerprint(plain.encode())


def test_inline_elements_nested_to_the_depth_limit_are_read_without_recursion(tmp_path: Path) -> None:
    depth = html.MAX_DEPTH - 10
    page = ("<html><head><title>Deep</title></head><body><h1>Deep</h1><p>"
            + "<span>a" * depth + "</span>" * depth + "</p></body></html>")
    assert "a" * depth in _text(_parse(tmp_path, "deep.html", page))


def test_off_reads_every_page_as_before_with_its_fingerprint(tmp_path: Path, settings: Any) -> None:
    settings.CORPUS_HTML_INLINE_WORDS = False
    doc = _parse(tmp_path, "amcheck.html", DOCBOOK)
    assert "items in “ logical ” order" in _text(doc) and doc.fingerprint == fingerprint(DOCBOOK.encode())
