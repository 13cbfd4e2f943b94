"""The LlamaIndex peer's page recall on golden sets (issue 47 items 5 and 6): the untuned
baseline every retrieval change is read against, in the same run.

    var/peer-venv/bin/python bench/peer_recall.py FOLDER --model PATH --database-url URL \
        --golden evaluation/golden/pgdocs-holdout.yaml [--golden ...] [--reuse] [--json OUT]

Runs in the peer's virtual environment (bench/peer-requirements.txt) and imports nothing of the
product. The index is bench/peer.py's pipeline (the same reader, SentenceSplitter(256), the
local all-MiniLM-L6-v2 on CPU, PGVectorStore), built with PGVectorStore's hybrid search on so one
index serves both modes a LlamaIndex user would try:
- dense: `index.as_retriever(similarity_top_k=10)`;
- hybrid: `vector_store_query_mode="hybrid"`, `sparse_top_k=10` (PostgreSQL full text search
  fused with the vectors by LlamaIndex's own rule).
A case is read as the product reads it offline: a follow-up joined to the user turn before it.
A page is the node's file path under FOLDER without `.html` (the golden sets' slugs); page
recall@k counts an answerable case whose expected page is among the first k distinct pages.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import yaml  # noqa: E402
from llama_index.core import SimpleDirectoryReader, VectorStoreIndex  # noqa: E402
from llama_index.core.node_parser import SentenceSplitter  # noqa: E402

from peer import EMBED_DIM, HtmlTextReader, _IDENTIFIER, drop_schema, sqlalchemy_urls  # noqa: E402

KS = (1, 5, 10)
ANSWERABLE = ("normal", "multi_turn", "stale", "conflict")


def cases(path: Path) -> list[dict[str, Any]]:
    """The answerable cases of a golden set: (id, the question as searched, expected pages)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    found = []
    for case in data["cases"]:
        if case.get("type", "normal") not in ANSWERABLE or not case.get("expected"):
            continue
        users = [turn["content"] for turn in case.get("history") or [] if turn["role"] == "user"]
        query = f"{users[-1].strip()} {case['question'].strip()}" if users else case["question"]
        found.append({"id": case["id"], "query": query, "pages": {loc["slug"] for loc in case["expected"]}})
    return found


def build(*, folder: Path, model: Path, url: str, async_url: str, schema: str, table: str, reuse: bool) -> Any:
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from llama_index.vector_stores.postgres import PGVectorStore

    embed_model = HuggingFaceEmbedding(model_name=str(model), device="cpu", embed_batch_size=64)
    if not reuse:
        drop_schema(url=url, schema=schema)
    store = PGVectorStore(connection_string=url, async_connection_string=async_url, schema_name=schema,
                          table_name=table, embed_dim=EMBED_DIM, hybrid_search=True, text_search_config="english")
    if not reuse:
        files = sorted(str(p) for p in folder.rglob("*.html"))
        documents = SimpleDirectoryReader(input_files=files, file_extractor={".html": HtmlTextReader()}).load_data()
        nodes = SentenceSplitter(chunk_size=256, chunk_overlap=20).get_nodes_from_documents(documents)
        store.add(embed_model(nodes))
    return VectorStoreIndex.from_vector_store(store, embed_model=embed_model)


def pages_of(nodes: list[Any], folder: Path) -> list[str]:
    pages: list[str] = []
    for hit in nodes:
        path = Path(hit.node.metadata.get("file_path", ""))
        try:
            page = path.relative_to(folder).with_suffix("").as_posix()
        except ValueError:
            page = path.stem
        if page not in pages:
            pages.append(page)
    return pages


def recall(index: Any, golden: list[dict[str, Any]], folder: Path, mode: str) -> dict[str, Any]:
    options = {"vector_store_query_mode": "hybrid", "sparse_top_k": 10} if mode == "hybrid" else {}
    retriever = index.as_retriever(similarity_top_k=10, **options)
    ranks = {}
    for case in golden:
        pages = pages_of(retriever.retrieve(case["query"]), folder)
        ranks[case["id"]] = next((i + 1 for i, page in enumerate(pages) if page in case["pages"]), None)
    found = {f"page_recall@{k}": round(sum(1 for r in ranks.values() if r and r <= k) / len(ranks), 4) for k in KS}
    return {**found, "cases": len(ranks), "ranks": ranks}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--golden", type=Path, action="append", required=True)
    parser.add_argument("--schema", default="llamaindex_recall")
    parser.add_argument("--table", default="pages")
    parser.add_argument("--reuse", action="store_true", help="query the index a previous run built")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    for name in (args.schema, args.table):
        if not _IDENTIFIER.match(name):
            raise SystemExit(f"{name!r} is not a lower-case SQL identifier (letters, digits, _)")
    folder = args.folder.resolve()
    url, async_url = sqlalchemy_urls(database_url=args.database_url)
    index = build(folder=folder, model=args.model, url=url, async_url=async_url, schema=args.schema,
                  table=args.table, reuse=args.reuse)
    result = {str(path): {mode: recall(index, cases(path), folder, mode) for mode in ("dense", "hybrid")}
              for path in args.golden}
    text = json.dumps(result, indent=2)
    print(json.dumps({g: {m: {k: v for k, v in r.items() if k != "ranks"} for m, r in modes.items()}
                      for g, modes in result.items()}, indent=2))
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
