"""Ingesting a generated documentation site: assets are skipped with their reason, never failed."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from conftest import Cast
from corpus.encoders.embedding import Encoder
from corpus.ingest.flow import ingest_paths
from corpus.tests.helpers import documents

PAGE = """<!doctype html><html><head><title>{title} &#8212; Demo docs</title></head><body>
<div class="sphinxsidebar">Navigation</div>
<div class="body"><h1>{title}</h1><p>{text}</p></div></body></html>"""


def sphinx_build(root: Path) -> Path:
    """The shape of a Sphinx HTML build (the Python and Django docs): pages and their assets."""
    html = root / "html"
    (html / "ref").mkdir(parents=True)
    (html / "index.html").write_text(PAGE.format(title="Welcome", text="Start here to learn the widget API."))
    (html / "ref" / "widgets.html").write_text(PAGE.format(title="Widgets", text="A widget renders one input."))
    (html / "_static").mkdir()
    (html / "_static" / "glossary.json").write_text('{"term": "not an entries file"}')
    (html / "_static" / "basic.css").write_text("body { margin: 0 }")
    (html / "_static" / "README.md").write_text("# Font Awesome\n\nIcons for the theme.\n")
    (html / "_sources" / "ref").mkdir(parents=True)
    (html / "_sources" / "index.rst.txt").write_text("Welcome\n=======\n\nStart here.\n")
    (html / "_sources" / "ref" / "widgets.rst.txt").write_text("Widgets\n=======\n\nA widget.\n")
    (html / "_modules").mkdir()
    (html / "_modules" / "widgets.html").write_text(PAGE.format(title="widgets", text="def render(): pass"))
    (html / "_images").mkdir()
    (html / "_images" / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (html / "searchindex.js").write_text('Search.setIndex({"docnames": ["index"]})')
    (html / "objects.inv").write_bytes(b"# Sphinx inventory version 2\n")
    (html / "genindex.html").write_text(PAGE.format(title="Index", text="render() widgets"))
    (html / "search.html").write_text(PAGE.format(title="Search", text="Please activate JavaScript."))
    return html


@pytest.mark.django_db
def test_sphinx_build_ingests_every_page_and_skips_assets_with_reasons(
        acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    html = sphinx_build(tmp_path)
    report = ingest_paths(tenant=acme.tenant, paths=[html], encoder=encoder)
    assert report.ok, report.failed
    assert report.added == 2
    assert set(documents(acme.tenant)) == {("doc", "index"), ("doc", "ref/widgets")}
    # glossary.json, basic.css, README.md | 2 sources | 1 listing | 1 image | searchindex.js,
    # objects.inv, genindex.html, search.html
    assert report.skipped == 11
    reasons = report.skipped_reasons
    assert sum(reasons.values()) == 11
    assert reasons["Sphinx theme and script assets (_static/)"] == 3
    assert reasons["Sphinx page sources; the built pages are ingested instead (_sources/)"] == 2
    assert reasons["Sphinx highlighted source code, not documentation (_modules/)"] == 1
    assert reasons["Sphinx images (_images/)"] == 1
    assert sum(v for k, v in reasons.items() if k.startswith("Sphinx generated index")) == 4


@pytest.mark.django_db
def test_ingest_command_reports_skipped_counts_in_json_and_summary(
        acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    html = sphinx_build(tmp_path)
    out = StringIO()
    call_command("ingest", str(html), tenant=acme.tenant.slug, json=True, no_progress=True, stdout=out)
    data = json.loads(out.getvalue())
    assert data["failed"] == [] and data["added"] == 2 and data["skipped"] == 11
    assert data["skipped_reasons"]["Sphinx images (_images/)"] == 1
    summary = StringIO()
    call_command("ingest", str(html), tenant=acme.tenant.slug, no_progress=True, stdout=summary)
    text = summary.getvalue()
    assert "2 unchanged" in text and "11 skipped" in text
    assert "3 Sphinx theme and script assets (_static/)" in text


@pytest.mark.django_db
def test_folder_that_is_not_a_sphinx_build_keeps_its_underscore_folders(
        acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    """The Sphinx rules need a build marker: a Markdown folder's own `_static/` page is a page,
    and a file no parser reads is counted as skipped with that reason (it used to vanish)."""
    docs = tmp_path / "docs"
    (docs / "_static").mkdir(parents=True)
    (docs / "_static" / "notes.md").write_text("# Notes\n\nStatic hosting is on the CDN.\n")
    (docs / "search.html").write_text(PAGE.format(title="Search tips", text="Quote a phrase to match it."))
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    report = ingest_paths(tenant=acme.tenant, paths=[docs], encoder=encoder)
    assert report.ok, report.failed
    assert set(documents(acme.tenant)) == {("doc", "_static/notes"), ("doc", "search")}
    assert report.skipped_reasons == {"no parser for .png": 1}


@pytest.mark.django_db
def test_broken_page_inside_a_build_still_fails(acme: Cast, encoder: Encoder, tmp_path: Path) -> None:
    """Skipping assets must not hide a page that did not go in."""
    html = sphinx_build(tmp_path)
    (html / "ref" / "broken.html").write_bytes(b"<html>\x00\x00binary</html>")
    report = ingest_paths(tenant=acme.tenant, paths=[html], encoder=encoder)
    assert not report.ok
    assert [Path(p).name for p, _ in report.failed] == ["broken.html"]
