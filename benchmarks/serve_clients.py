"""Load run of ``tripy serve`` with NVIDIA's own clients (``tritonclient.http.aio`` with binary tensors, and
``tritonclient.grpc.aio``) on loopback: throughput and p50/p99 latency at concurrency 1, 8 and 32, with dynamic
batching off and on, and the number of wrong or failed answers (each answer is checked against the executable
called in this process).

``perf_analyzer`` (PyPI ``perf-analyzer``) is the usual tool for this, but its binary needs glibc 2.38, newer than
some machines (this project's CI among them) have; this script drives the same protocol with the same client
libraries instead. A one-row request at a time per client, each client sending its next request when the previous
answer arrives (perf_analyzer's default closed loop); at most REQUESTS requests or TIME_LIMIT seconds per cell.

    uv run python benchmarks/serve_clients.py                         # 400 requests or 10 s per cell
    uv run python benchmarks/serve_clients.py --requests 2000 --time-limit 30 --hidden 4096

The clients run on the same machine as the server, so on a small machine they compete for the cores.
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

import numpy as np
import tritonclient.grpc.aio as grpcclient
import tritonclient.http.aio as httpclient

import tripy as tp

# The tests' helpers: start `python -m tripy.serve` on free loopback ports, stop it with SIGTERM.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "serve"))
from server import free_port, serve  # noqa: E402

IN, OUT, MAX_ROWS = 256, 256, 32
CONCURRENCY = (1, 8, 32)


def save_model(path: str, hidden: int) -> tp.Executable:
    """A two-layer MLP (IN -> hidden -> OUT, float32, rows 1..MAX_ROWS), saved to `path`."""
    rng = np.random.default_rng(0)
    first, second = tp.Linear(IN, hidden), tp.Linear(hidden, OUT)
    for layer, (o, i) in ((first, (hidden, IN)), (second, (OUT, hidden))):
        layer.weight = tp.Tensor((rng.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32))
        layer.bias = tp.Tensor(np.zeros((o,), np.float32))
    exe = tp.compile(lambda x: second(tp.relu(first(x))), args=[tp.InputInfo(((1, 8, MAX_ROWS), IN), tp.float32)])
    exe.save(path)
    return exe


async def run_cell(
    module: Any,
    url: str,
    concurrency: int,
    requests: int,
    time_limit: float,
    xs: List[np.ndarray],
    expected: List[np.ndarray],
) -> Dict[str, float]:
    """`concurrency` closed-loop clients of `module` (tritonclient's http.aio or grpc.aio) against `url`."""
    latencies: List[float] = []
    errors, issued = [0], [0]
    deadline = time.perf_counter() + time_limit
    clients = [module.InferenceServerClient(url) for _ in range(concurrency)]

    async def loop(client: Any) -> None:
        while issued[0] < requests and time.perf_counter() < deadline:
            k = issued[0] % len(xs)
            issued[0] += 1
            inp = module.InferInput("x", [1, IN], "FP32")
            inp.set_data_from_numpy(xs[k])
            t0 = time.perf_counter()
            try:
                got = (await client.infer("mlp", [inp])).as_numpy("output_0")
            except Exception:
                got = None
            latencies.append(time.perf_counter() - t0)
            if got is None or not np.allclose(got, expected[k], rtol=1e-4, atol=1e-4):
                errors[0] += 1

    start = time.perf_counter()
    await asyncio.gather(*(loop(c) for c in clients))
    elapsed = time.perf_counter() - start
    for c in clients:
        await c.close()
    lat = np.array(latencies) * 1e3
    return {
        "requests": len(latencies),
        "errors": errors[0],
        "rps": len(latencies) / elapsed,
        "p50_ms": float(np.percentile(lat, 50)),
        "p99_ms": float(np.percentile(lat, 99)),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--requests", type=int, default=400, help="requests per cell, at most")
    p.add_argument("--time-limit", type=float, default=10.0, help="seconds per cell, at most")
    p.add_argument("--hidden", type=int, default=1024, help="the MLP's hidden width (more compute per row)")
    p.add_argument("--max-wait-ms", type=float, default=2.0)
    args = p.parse_args()
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((1, IN)).astype(np.float32) for _ in range(16)]
    print("| batching | protocol | concurrency | requests | req/s | p50 ms | p99 ms | errors |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        model = str(pathlib.Path(d) / "mlp.tpexe")
        exe = save_model(model, args.hidden)
        expected = [np.from_dlpack(exe(tp.Tensor(x))) for x in xs]
        for label, flags in [
            ("off", ["--max-batch", "1"]),
            (
                f"on ({MAX_ROWS} rows, {args.max_wait_ms:g} ms)",
                ["--max-batch", str(MAX_ROWS), "--max-wait-ms", str(args.max_wait_ms)],
            ),
        ]:
            grpc_port = free_port()
            with serve(
                [model, "--log-level", "warning", "--grpc-port", str(grpc_port)] + flags, pathlib.Path(d) / "server.log"
            ) as s:
                urls: Dict[str, Callable[[], str]] = {
                    "HTTP": lambda: s.url[len("http://") :],
                    "gRPC": lambda: f"127.0.0.1:{grpc_port}",
                }
                for protocol, module in (("HTTP", httpclient), ("gRPC", grpcclient)):
                    for c in CONCURRENCY:
                        r = asyncio.run(
                            run_cell(module, urls[protocol](), c, args.requests, args.time_limit, xs, expected)
                        )
                        print(
                            f"| {label} | {protocol} | {c} | {r['requests']} | {r['rps']:.0f} | {r['p50_ms']:.1f} "
                            f"| {r['p99_ms']:.1f} | {r['errors']} |",
                            flush=True,
                        )
    print(f"(MLP {IN}->{args.hidden}->{OUT}, float32, one-row requests, binary tensors over HTTP)")


if __name__ == "__main__":
    main()
