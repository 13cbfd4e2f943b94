"""The LlamaIndex peer of `make bench-peer` (issue 20 item 4): the same manual, model and
PostgreSQL, through LlamaIndex's own pipeline, timed end to end.

    var/peer-venv/bin/python bench/peer.py FOLDER --model PATH --database-url URL [--json OUT]

Runs in its own virtual environment (var/peer-venv, bench/peer-requirements.txt) and imports
nothing of the product: bench/ingest_vs_peer.py starts it right after Answerdesk's ingest and
hands it the product's model path and the bench database's socket URL.

The pipeline, as a LlamaIndex user writes it:
- read: SimpleDirectoryReader over FOLDER's *.html, with a plain HTML reader (Python's
  html.parser: the page's text, script and style dropped, a line break after each block
  element; LlamaIndex's core ships no HTML reader of its own);
- split: SentenceSplitter(chunk_size=256), LlamaIndex's default tokenizer (tiktoken, its
  vocabulary bundled in llama-index-core) and chunk_overlap as given;
- embed: HuggingFaceEmbedding on the local all-MiniLM-L6-v2, CPU, embed_batch_size=64;
- insert: PGVectorStore (its defaults: no HNSW index) into SCHEMA.TABLE, schema dropped first.

The model is loaded and warmed before the clock starts, as bench/ingest.py does for
Answerdesk. Prints and writes one JSON object: seconds per stage and in all, chunks, chunks/s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from html.parser import HTMLParser
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from llama_index.core import Document, SimpleDirectoryReader  # noqa: E402
from llama_index.core.node_parser import SentenceSplitter  # noqa: E402
from llama_index.core.readers.base import BaseReader  # noqa: E402

EMBED_DIM = 384
_PACKAGES = ("llama-index-core", "llama-index-vector-stores-postgres", "llama-index-embeddings-huggingface",
             "sentence-transformers", "torch")
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_BLOCKS = frozenset("p div li dt dd tr pre br h1 h2 h3 h4 h5 h6 table title blockquote".split())


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style"):
            self._hidden += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._hidden = max(0, self._hidden - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


class HtmlTextReader(BaseReader):
    """A page's text, paragraphs kept apart by blank lines (the splitter's paragraph marks)."""

    def load_data(self, file: Path, extra_info: dict[str, Any] | None = None, **_: Any) -> list[Document]:
        parser = _TextParser()
        parser.feed(Path(file).read_text(encoding="utf-8", errors="replace"))
        parser.close()
        lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
        text = "\n\n".join(line for line in lines if line)
        return [Document(text=text, metadata=extra_info or {})]


def sqlalchemy_urls(*, database_url: str) -> tuple[str, str]:
    """A libpq URL (postgresql://role@/db?host=/socket/dir) as SQLAlchemy's psycopg2 and asyncpg URLs."""
    parts = urlsplit(database_url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise SystemExit(f"--database-url must be a postgresql:// URL, got scheme {parts.scheme!r}")
    if not parts.path.strip("/"):
        raise SystemExit(f"--database-url names no database: {database_url!r}")
    rest = database_url.split("://", 1)[1]
    return f"postgresql+psycopg2://{rest}", f"postgresql+asyncpg://{rest}"


def html_files(*, folder: Path, limit: int | None) -> list[Path]:
    if not folder.is_dir():
        raise SystemExit(f"{folder} is not a folder")
    files = sorted(folder.glob("*.html"))
    if not files:
        raise SystemExit(f"{folder} holds no .html files")
    return files[:limit] if limit else files


def drop_schema(*, url: str, schema: str) -> None:
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    with engine.begin() as conn:
        # The identifier was checked against _IDENTIFIER: quoting it is enough.
        conn.execute(sqlalchemy.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    engine.dispose()


def run(*, files: list[Path], model: Path, url: str, async_url: str, schema: str, table: str,
        chunk_overlap: int, batch_size: int) -> dict[str, Any]:
    """Load the model, then time read, split, embed and insert; returns the measurements."""
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from llama_index.vector_stores.postgres import PGVectorStore

    embed_model = HuggingFaceEmbedding(model_name=str(model), device="cpu", embed_batch_size=batch_size)
    embed_model.get_text_embedding("warm up")
    drop_schema(url=url, schema=schema)
    store = PGVectorStore(connection_string=url, async_connection_string=async_url, schema_name=schema,
                          table_name=table, embed_dim=EMBED_DIM)
    splitter = SentenceSplitter(chunk_size=256, chunk_overlap=chunk_overlap)

    t0 = time.perf_counter()
    documents = SimpleDirectoryReader(input_files=[str(f) for f in files],
                                      file_extractor={".html": HtmlTextReader()}).load_data()
    t1 = time.perf_counter()
    nodes = splitter.get_nodes_from_documents(documents)
    t2 = time.perf_counter()
    nodes = embed_model(nodes)
    t3 = time.perf_counter()
    store.add(nodes)
    t4 = time.perf_counter()
    stored = _count_rows(url=url, schema=schema, table=f"data_{table}")
    return {
        "pages": len(files),
        "documents": len(documents),
        "chunks": len(nodes),
        "stored_rows": stored,
        "seconds": round(t4 - t0, 2),
        "chunks_per_s": round(len(nodes) / (t4 - t0), 2) if nodes else None,
        "stage_seconds": {"read": round(t1 - t0, 2), "split": round(t2 - t1, 2),
                          "embed": round(t3 - t2, 2), "insert": round(t4 - t3, 2)},
        "config": {"reader": "SimpleDirectoryReader + html.parser text (bench/peer.py HtmlTextReader)",
                   "splitter": f"SentenceSplitter(chunk_size=256, chunk_overlap={chunk_overlap}), tiktoken",
                   "embedding": f"HuggingFaceEmbedding({model}, cpu, embed_batch_size={batch_size})",
                   "store": f"PGVectorStore {schema}.data_{table}, defaults (no HNSW index)",
                   "versions": {name: version(name) for name in _PACKAGES}},
    }


def _count_rows(*, url: str, schema: str, table: str) -> int:
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    with engine.connect() as conn:
        count = conn.execute(sqlalchemy.text(f'SELECT count(*) FROM "{schema}"."{table}"')).scalar_one()
    engine.dispose()
    return int(count)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--model", type=Path, required=True, help="the local sentence-transformers folder")
    parser.add_argument("--database-url", required=True, help="postgresql://role@/db?host=/socket/dir")
    parser.add_argument("--schema", default="llamaindex_peer")
    parser.add_argument("--table", default="pgdocs")
    parser.add_argument("--limit", type=int, default=None, help="the first N pages by name")
    parser.add_argument("--chunk-overlap", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    for name in (args.schema, args.table):
        if not _IDENTIFIER.match(name):
            raise SystemExit(f"{name!r} is not a lower-case SQL identifier (letters, digits, _)")
    if not (args.model / "config.json").is_file():
        raise SystemExit(f"--model {args.model} is not a model folder (no config.json)")
    if args.limit is not None and args.limit < 1:
        raise SystemExit(f"--limit must be at least 1, got {args.limit}")
    url, async_url = sqlalchemy_urls(database_url=args.database_url)
    result = run(files=html_files(folder=args.folder, limit=args.limit), model=args.model, url=url,
                 async_url=async_url, schema=args.schema, table=args.table, chunk_overlap=args.chunk_overlap,
                 batch_size=args.batch_size)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0 if result["stored_rows"] == result["chunks"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
