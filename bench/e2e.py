"""End to end: POST /api/v1/ask under a bounded load, and the server's resident memory.

    .venv/bin/python bench/e2e.py [--clients 4] [--seconds 60] [--cache on|off]

Starts its own uvicorn process (one worker, the way `make run` serves) on loopback against
the bench database (var/bench-pgdata) with the demo corpus loaded, issues an API key, and
runs N concurrent asyncio clients for a fixed duration, each posting questions from the
demo golden sets (normal and must-abstain cases, so both answers and escalations are in the
mix) with the offline extractive answerer. Measures throughput, p50/p95 latency, error
count, and the server's resident set size (VmRSS from /proc) idle after start (model loaded)
and at its peak under load. With `--cache off` every question runs the full pipeline;
`on` is the product's default, where repeated questions are served from the answer cache.
Writes bench/results/e2e.json (merged by cache mode).

    .venv/bin/python bench/e2e.py --manual

runs the same load against the developer database's `pgdocs` tenant (the whole PostgreSQL
manual, `make pgdocs`), the questions of the pgdocs developer sets (normal and must-abstain,
cycled), cache off, with 1 and then 4 clients, and reads where the time went from the traces
the runs wrote (each stage's p50/p95). Writes bench/results/e2e-pgdocs.json (issue 51).

    .venv/bin/python bench/e2e.py --cache off --backends torch,onnx-int8

runs one server per EMBEDDING_BACKEND back to back on the same database, the tenant re-encoded
by each backend before its run, and writes bench/results/e2e-encoder.json with the p50 change.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

from harness import ROOT, start_django


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no VmRSS for pid {pid}")


def questions(names: tuple[str, ...] = ("demo-paylane.yaml",)) -> list[str]:
    import yaml

    out = []
    for name in names:
        data = yaml.safe_load((ROOT / "evaluation" / "golden" / name).read_text())
        out += [c["question"] for c in data["cases"] if c.get("type") in ("normal", "must_abstain", "stale")]
    return out


async def load(url: str, key: str, qs: list[str], clients: int, seconds: float, pid: int) -> dict[str, object]:
    import httpx

    latencies: list[float] = []
    errors: dict[str, int] = {}
    actions: dict[str, int] = {}
    peak = rss_mb(pid)
    stop = time.monotonic() + seconds

    async def client(index: int) -> None:
        nonlocal peak
        async with httpx.AsyncClient(base_url=url, timeout=60,
                                     headers={"Authorization": f"Bearer {key}"}) as http:
            n = index
            while time.monotonic() < stop:
                question = qs[n % len(qs)]
                n += clients
                started = time.perf_counter()
                try:
                    response = await http.post("/api/v1/ask", json={"question": question})
                except httpx.HTTPError as exc:
                    errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                    continue
                latencies.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    errors[str(response.status_code)] = errors.get(str(response.status_code), 0) + 1
                else:
                    action = response.json()["action"]
                    actions[action] = actions.get(action, 0) + 1
                peak = max(peak, rss_mb(pid))

    began = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    elapsed = time.perf_counter() - began
    latencies.sort()

    def pct(p: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(len(latencies) * p / 100))], 1) if latencies else 0.0

    return {"clients": clients, "seconds": round(elapsed, 1), "requests": len(latencies),
            "throughput_rps": round(len(latencies) / elapsed, 2), "latency_ms_p50": pct(50),
            "latency_ms_p95": pct(95), "errors": sum(errors.values()), "error_kinds": errors,
            "actions": actions, "rss_mb_peak_under_load": peak}


def encode_tenant_with(tenant: object, backend: str) -> None:
    """Give the tenant's vectors to `backend`, so the server of that backend searches its own."""
    from corpus.encoders.embedding import Encoder, get_encoder, model_path
    from corpus.encoders import load_backend
    from corpus.ingest.reembed import reembed_tenant

    configured = get_encoder()
    encoder = configured if configured.backend.name == backend else Encoder(
        backend=load_backend(backend, model_path()), name=configured.name, dimension=configured.dimension)
    reembed_tenant(tenant=tenant, encoder=encoder)  # type: ignore[arg-type]


def serve_and_load(*, key: str, args: argparse.Namespace, backend: str | None,
                   qs: list[str] | None = None) -> dict[str, object]:
    """One uvicorn process (EMBEDDING_BACKEND=backend when given) under the clients' load."""
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "API_RATE_LIMIT_PER_ADDRESS": "0", "API_RATE_LIMIT_PER_KEY": "0",
           "CACHE_ENABLED": "1" if args.cache == "on" else "0", "ANSWER_PROVIDERS": ""}
    if backend:
        env["EMBEDDING_BACKEND"] = backend
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1",
                               "--port", str(port), "--lifespan", "off", "--log-level", "warning"],
                              cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("server did not start")
            time.sleep(0.3)
        rss_started = rss_mb(server.pid)
        # One question loads the model (the server loads it lazily, on the first encode).
        httpx.post(f"{url}/api/v1/ask", json={"question": "How do refunds work?"},
                   headers={"Authorization": f"Bearer {key}"}, timeout=120)
        rss_idle = rss_mb(server.pid)
        result = asyncio.run(load(url, key, qs or questions(), args.clients, args.seconds, server.pid))
    finally:
        server.terminate()
        server.wait(timeout=20)
    result.update({"cache": args.cache, "rss_mb_after_start": rss_started, "rss_mb_model_loaded_idle": rss_idle,
                   "answerer": "extractive (offline)", "load_average_after": [round(x, 2) for x in os.getloadavg()],
                   "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"})
    return result


def stage_percentiles(tenant_id: int, since: float) -> dict[str, dict[str, float]]:
    """Each stage's p50/p95 over the traces the run wrote (answering_trace.stage_ms)."""
    import datetime as dt

    from tenants.rls import rls_transaction

    with rls_transaction(tenant_id=tenant_id, all_audiences=True) as cursor:
        # Index: answering_trace's tenant and creation time; one run's few thousand rows.
        cursor.execute("SELECT stage_ms FROM answering_trace WHERE tenant_id = %s AND created_at >= %s",
                       [tenant_id, dt.datetime.fromtimestamp(since, tz=dt.timezone.utc)])
        rows = [row[0] for row in cursor.fetchall()]
    stages: dict[str, list[float]] = {}
    for row in rows:
        for stage, ms in (json.loads(row) if isinstance(row, str) else row).items():
            stages.setdefault(stage, []).append(float(ms))
    out = {}
    for stage, values in stages.items():
        values.sort()
        out[stage] = {"p50": round(values[len(values) // 2], 1),
                      "p95": round(values[min(len(values) - 1, int(len(values) * 0.95))], 1)}
    return out


def manual(args: argparse.Namespace) -> int:
    """The answer path on a tenant the size of a manual (issue 51 item 3)."""
    start_django(own_database=False, migrate=False)
    from tenants import actions
    from tenants.models import Tenant

    tenant = Tenant.objects.filter(slug="pgdocs").first()
    if tenant is None:
        print("no pgdocs tenant in the developer database: run `make pgdocs` first")
        return 1
    qs = questions(("pgdocs-dev.yaml", "pgdocs-dev2.yaml"))
    key = actions.api_key_create(tenant=tenant, name="bench e2e manual", rate_limit_per_minute=0).raw_key
    report: dict[str, object] = {"tenant": "pgdocs", "questions": len(qs), "cache": "off",
                                 "load_average_before": [round(x, 2) for x in os.getloadavg()]}
    args.cache = "off"
    for clients in (1, 4):
        args.clients = clients
        since = time.time()
        run = serve_and_load(key=key, args=args, backend=None, qs=qs)
        run["stage_ms"] = stage_percentiles(tenant.id, since)
        report[f"clients_{clients}"] = run
    out = ROOT / "bench" / "results" / "e2e-pgdocs.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


def main() -> int:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--cache", choices=("on", "off"), default="off")
    parser.add_argument("--backends", default="",
                        help="comma-separated EMBEDDING_BACKENDs run back to back, the tenant re-encoded by each "
                             "before its run (writes bench/results/e2e-encoder.json)")
    parser.add_argument("--manual", action="store_true",
                        help="the pgdocs tenant of the developer database, 1 and 4 clients (e2e-pgdocs.json)")
    args = parser.parse_args()
    if args.manual:
        return manual(args)
    start_django(own_database=True, migrate=True)
    from corpus.demo.load import demo_load
    from tenants import actions
    from tenants.models import Tenant

    if not Tenant.objects.filter(slug="paylane").exists():
        demo_load()
    tenant = Tenant.objects.get(slug="paylane")
    if not args.backends:
        from corpus.ingest.reembed import reembed_tenant

        # What `make run` does first (reembed --all): a tenant stored before this encoder or
        # without token states (0063) is brought up to date, so the run measures today's product.
        print(reembed_tenant(tenant=tenant).summary())
    key = actions.api_key_create(tenant=tenant, name="bench e2e", rate_limit_per_minute=0).raw_key
    if args.backends:
        runs: dict[str, object] = {"command": " ".join(sys.argv[1:]),
                                   "load_average_before": [round(x, 2) for x in os.getloadavg()]}
        for backend in args.backends.split(","):
            encode_tenant_with(tenant, backend)
            runs[backend] = serve_and_load(key=key, args=args, backend=backend)
        names = args.backends.split(",")
        if len(names) == 2:
            first, second = (runs[n]["latency_ms_p50"] for n in names)  # type: ignore[index]
            runs["p50_change"] = round(second / first - 1, 3)
        out = ROOT / "bench" / "results" / "e2e-encoder.json"
        out.write_text(json.dumps(runs, indent=2) + "\n")
        print(json.dumps(runs, indent=2))
        return 0
    result = serve_and_load(key=key, args=args, backend=None)
    out = ROOT / "bench" / "results" / "e2e.json"
    merged = json.loads(out.read_text()) if out.exists() else {}
    merged[f"cache_{args.cache}"] = result
    out.write_text(json.dumps(merged, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
