"""Adapt the encoder to one tenant's corpus: contrastive fine-tuning on heading → section pairs.

An experiment for issue 16 (docs/decisions/0074), not a product path. Each distinct heading
path of the tenant's live chunks is a query; the body of one chunk under it (without the
heading path the chunk text starts with, or the pair teaches nothing) is its positive; the
other pairs of the batch are the negatives (in-batch softmax over cosines, scale 20, as
sentence-transformers' MultipleNegativesRankingLoss). No golden question is read.

    .venv/bin/python bench/adapt_encoder.py --tenant pgdocs --out var/encoders/adapted/pgdocs

The output is a sentence-transformers directory (the bundled model's files, new weights), which
the `encoder_adapted` evaluation arm loads with the torch backend.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import torch  # noqa: E402
from psycopg import sql  # noqa: E402
from transformers import AutoModel, AutoTokenizer  # noqa: E402

from corpus.encoders.embedding import model_path  # noqa: E402
from tenants.models import Audience, Tenant  # noqa: E402
from tenants.scope import ChunkQuery, TenantScope  # noqa: E402

# Every live chunk under a heading, read through the tenant's scope (all its audiences); the
# first chunk of each heading path is that path's positive.
_PAIRS = ChunkQuery(select=sql.SQL("c.heading_path, c.content"), where=sql.SQL("c.heading_path <> ''"),
                    order_by=sql.SQL("c.heading_path, c.id"))


# "12.4.1. " and "J.3. " number a manual's sections; no one asks with them.
_NUMBER = re.compile(r"^(?:[A-Z]|\d+)(?:\.\d+)*\.\s+")


def pairs(tenant: Tenant, *, seed: int) -> list[tuple[str, str]]:
    audiences = tuple(Audience.objects.filter(tenant=tenant).values_list("id", flat=True))
    first: dict[str, str] = {}
    for row in TenantScope(tenant_id=tenant.id, audience_ids=audiences).fetch(_PAIRS):
        first.setdefault(row["heading_path"], row["content"])
    out = []
    for heading_path, content in first.items():
        prefix = f"{heading_path}\n\n"
        body = content[len(prefix):] if content.startswith(prefix) else content
        if len(body) < 80:
            continue
        # The last two parts: "Memory > work_mem (integer)" reads like a topic, the whole path like a breadcrumb.
        query = " > ".join(_NUMBER.sub("", part.strip()) for part in heading_path.split(" > ")[-2:])
        out.append((query, body))
    random.Random(seed).shuffle(out)
    return out


def mean_pool(output: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.unsqueeze(-1).float()
    return (output * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


def train(data: list[tuple[str, str]], out: Path, *, epochs: int, batch: int, lr: float, max_len: int,
          log: Path) -> None:
    base = model_path()
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    model = AutoModel.from_pretrained(str(base))
    model.train()
    torch.set_num_threads(os.cpu_count() or 1)
    steps = epochs * (len(data) // batch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (steps - s) / max(1, steps - warmup)))
    started, step = time.perf_counter(), 0
    history = []
    for epoch in range(epochs):
        for start in range(0, len(data) - batch + 1, batch):
            queries, passages = zip(*data[start:start + batch])
            q = tokenizer(list(queries), padding=True, truncation=True, max_length=64, return_tensors="pt")
            p = tokenizer(list(passages), padding=True, truncation=True, max_length=max_len, return_tensors="pt")
            qv = torch.nn.functional.normalize(mean_pool(model(**q).last_hidden_state, q["attention_mask"]), dim=-1)
            pv = torch.nn.functional.normalize(mean_pool(model(**p).last_hidden_state, p["attention_mask"]), dim=-1)
            scores = 20.0 * qv @ pv.T
            labels = torch.arange(len(queries))
            # Both directions: a heading finds its section, a section its heading.
            loss = (torch.nn.functional.cross_entropy(scores, labels)
                    + torch.nn.functional.cross_entropy(scores.T, labels)) / 2
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            step += 1
            history.append(round(float(loss.detach()), 4))
            if step % 10 == 0 or step == steps:
                elapsed = time.perf_counter() - started
                print(f"step {step}/{steps} epoch {epoch} loss {sum(history[-10:]) / len(history[-10:]):.3f} "
                      f"{elapsed:.0f} s", flush=True)
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(base, out)
    model.save_pretrained(str(out), safe_serialization=True)
    log.write_text(json.dumps({"pairs": len(data), "epochs": epochs, "batch": batch, "lr": lr, "max_len": max_len,
                               "steps": step, "seconds": round(time.perf_counter() - started, 1),
                               "loss": history}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tenant", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--max-len", type=int, default=128)
    parser.add_argument("--limit", type=int, default=0, help="at most this many pairs (0: all)")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    tenant = Tenant.objects.get(slug=args.tenant)
    data = pairs(tenant, seed=args.seed)
    if args.limit:
        data = data[: args.limit]
    print(f"{tenant.slug}: {len(data)} heading → section pairs", flush=True)
    log = Path(__file__).resolve().parent / "results" / f"adapt-{tenant.slug}.json"
    train(data, args.out, epochs=args.epochs, batch=args.batch, lr=args.lr, max_len=args.max_len, log=log)
    print(f"saved {args.out}; log {log}")


if __name__ == "__main__":
    main()
