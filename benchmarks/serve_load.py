"""Load test of ``tripy serve`` on loopback: throughput and p50/p99 latency, with and without dynamic batching.

A two-layer MLP (512 -> 4096 -> 512, float32, 16 MB of weights, rows 1..64) is saved, then served twice in turn on 127.0.0.1:
once with ``--max-batch 1`` (every request its own call), once with ``--max-batch 64 --max-wait-ms W`` (every call
padded to 64 rows, so answers are bitwise independent of batching) and once more with ``--no-pad-batch``.
Each time, CONCURRENCY clients (one asyncio process, httpx) send REQUESTS one-row infer requests in all, each
client sending its next request when the previous answer arrives; the run stops early at the time limit.
Each answer is checked against the executable called in this process. Prints requests/s, the latency
percentiles, the executable calls the server made (its statistics endpoint), and the batched/unbatched ratio.

    uv run python benchmarks/serve_load.py                       # 2000 requests, 32 clients, 60 s limit each
    uv run python benchmarks/serve_load.py --requests 500 --concurrency 8 --time-limit 20
    uv run python benchmarks/serve_load.py --hidden 16384 --max-wait-ms 10   # compute-bound: 64 MB of weights

The client runs on the same machine as the server, so on a small machine they compete for the cores.
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import sys
import tempfile
import time
from typing import Dict, List

import httpx
import numpy as np

import tripy as tp

# The tests' helper that starts `python -m tripy.serve` on a free loopback port and stops it with SIGTERM.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "serve"))
from server import serve  # noqa: E402

IN, HIDDEN, OUT, MAX_ROWS = 512, 4096, 512, 64


def save_model(path: str) -> tp.Executable:
    """Compile and save the MLP (dims IN -> HIDDEN -> OUT, which --hidden may change) and return it."""
    rng = np.random.default_rng(0)
    first, second = tp.Linear(IN, HIDDEN), tp.Linear(HIDDEN, OUT)
    for layer, (o, i) in ((first, (HIDDEN, IN)), (second, (OUT, HIDDEN))):
        layer.weight = tp.Tensor((rng.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32))
        layer.bias = tp.Tensor(np.zeros((o,), np.float32))
    exe = tp.compile(lambda x: second(tp.relu(first(x))), args=[tp.InputInfo(((1, 8, MAX_ROWS), IN), tp.float32)])
    exe.save(path)
    return exe


async def load(url: str, requests: int, concurrency: int, time_limit: float, exe: tp.Executable) -> Dict[str, float]:
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((1, IN)).astype(np.float32) for _ in range(16)]
    expected = [np.from_dlpack(exe(tp.Tensor(x))) for x in xs]
    bodies = [
        {"inputs": [{"name": "x", "shape": [1, IN], "datatype": "FP32", "data": x.reshape(-1).tolist()}]} for x in xs
    ]
    latencies: List[float] = []
    errors = [0]
    issued = [0]
    deadline = time.perf_counter() + time_limit

    async def client(c: httpx.AsyncClient) -> None:
        while issued[0] < requests and time.perf_counter() < deadline:
            k = issued[0] % len(bodies)
            issued[0] += 1
            t0 = time.perf_counter()
            r = await c.post("/v2/models/mlp/infer", json=bodies[k])
            latencies.append(time.perf_counter() - t0)
            got = np.array(r.json()["outputs"][0]["data"], np.float32).reshape(1, OUT) if r.status_code == 200 else None
            if got is None or not np.allclose(got, expected[k], rtol=1e-4, atol=1e-4):
                errors[0] += 1

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as c:
        start = time.perf_counter()
        await asyncio.gather(*(client(c) for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
        stats = (await c.get("/v2/models/mlp/stats")).json()["model_stats"][0]
    lat = np.array(latencies) * 1e3
    return {
        "requests": len(latencies),
        "errors": errors[0],
        "seconds": elapsed,
        "rps": len(latencies) / elapsed,
        "p50_ms": float(np.percentile(lat, 50)),
        "p99_ms": float(np.percentile(lat, 99)),
        "calls": stats["execution_count"],
        "mean_rows": stats["inference_count"] / max(1, stats["execution_count"]),
    }


def main() -> None:
    global HIDDEN
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds per configuration, at most")
    p.add_argument("--max-wait-ms", type=float, default=2.0)
    p.add_argument("--hidden", type=int, default=HIDDEN, help="the MLP's hidden width (more compute per row)")
    args = p.parse_args()
    HIDDEN = args.hidden
    with tempfile.TemporaryDirectory() as d:
        model = str(pathlib.Path(d) / "mlp.tpexe")
        exe = save_model(model)
        results = {}
        for label, flags in [
            ("unbatched (--max-batch 1)", ["--max-batch", "1"]),
            (
                f"batched (--max-batch {MAX_ROWS} --max-wait-ms {args.max_wait_ms:g})",
                ["--max-batch", str(MAX_ROWS), "--max-wait-ms", str(args.max_wait_ms)],
            ),
            (
                "batched, --no-pad-batch",
                ["--max-batch", str(MAX_ROWS), "--max-wait-ms", str(args.max_wait_ms), "--no-pad-batch"],
            ),
        ]:
            with serve([model, "--log-level", "warning"] + flags, pathlib.Path(d) / "server.log") as s:
                results[label] = r = asyncio.run(load(s.url, args.requests, args.concurrency, args.time_limit, exe))
            print(
                f"{label:45s} {r['requests']:5d} requests in {r['seconds']:5.1f} s: {r['rps']:7.1f} req/s, "
                f"p50 {r['p50_ms']:6.1f} ms, p99 {r['p99_ms']:6.1f} ms, {r['calls']} calls "
                f"({r['mean_rows']:.1f} rows/call), {r['errors']} wrong answers",
                flush=True,
            )
    unbatched, *batched = results.values()
    for name, b in zip(("padded", "unpadded"), batched):
        print(
            f"batched ({name}) / unbatched: throughput {b['rps'] / unbatched['rps']:.2f}x, "
            f"p50 latency {b['p50_ms'] / unbatched['p50_ms']:.2f}x, p99 latency {b['p99_ms'] / unbatched['p99_ms']:.2f}x "
            f"({args.concurrency} clients, one-row requests, MLP {IN}->{HIDDEN}->{OUT})"
        )


if __name__ == "__main__":
    main()
