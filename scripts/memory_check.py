"""Resident memory under repeated work: prints one JSON line with the growth (MB) of each phase after its
warm-up, and what dropping a 200 MB tensor gives back. tests/reliability/test_memory.py runs it with a small
count of new-shape compiles (with a program cache of a few entries); the full counts are the defaults:

    uv run python scripts/memory_check.py          # 10,000 eager evals, 1,000 new shapes, 1,000 calls
"""

from __future__ import annotations

import argparse
import gc
import json
import os

import numpy as np


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def settled_rss() -> float:
    gc.collect()
    return rss_mb()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eager", type=int, default=10000, help="eager evaluations of one graph shape")
    parser.add_argument("--new-shapes", type=int, default=1000, help="eager evaluations at new shapes (compiles)")
    parser.add_argument("--calls", type=int, default=1000, help="calls of one compiled executable")
    parser.add_argument("--cache-size", type=int, default=None, help="eager program cache capacity (default: tripy's)")
    args = parser.parse_args()

    import tripy as tp
    from tripy_frontend import eager

    if args.cache_size is not None:
        eager.PROGRAM_CACHE.capacity = args.cache_size
    capacity = eager.PROGRAM_CACHE.capacity
    rng = np.random.default_rng(0)
    report = {"program_cache_capacity": capacity}

    def eager_step() -> None:
        a = tp.Tensor(rng.standard_normal((16, 16), dtype=np.float32))
        np.from_dlpack(tp.tanh(a @ a + 1.0) * 2.0)

    def measure(name: str, step, count: int, warmup: int) -> None:  # type: ignore[no-untyped-def]
        for i in range(warmup):
            step(i)
        before = settled_rss()
        for i in range(warmup, warmup + count):
            step(i)
        report[f"{name}_count"] = count
        report[f"{name}_growth_mb"] = round(settled_rss() - before, 1)

    measure("eager", lambda i: eager_step(), args.eager, 500)
    # New shapes: each compiles a program; after `capacity` of them the cache evicts one per new program. The heap
    # settles during the first turnover of the cache (measured: +25 MB from 512 to 800 programs with the default
    # capacity, then ~0.5 MB per 200), so the warm-up is two cache-fulls.
    measure("new_shapes", lambda i: np.from_dlpack(tp.exp(tp.ones((i + 1, 3))) * 2.0), args.new_shapes,
            max(2 * capacity, capacity + 50))
    exe = tp.compile(lambda a, b: tp.tanh(a @ b) + 1.0,
                     args=[tp.InputInfo((16, 16), tp.float32), tp.InputInfo((16, 16), tp.float32)])
    x = tp.Tensor(rng.standard_normal((16, 16), dtype=np.float32))
    measure("calls", lambda i: np.from_dlpack(exe(x, x)), args.calls, 200)

    before = settled_rss()
    big = tp.Tensor(np.ones((50_000_000,), np.float32))  # 200 MB (the NumPy array is a temporary)
    report["big_tensor_held_mb"] = round(settled_rss() - before, 1)
    del big
    report["big_tensor_left_mb"] = round(settled_rss() - before, 1)
    before = settled_rss()
    result = (tp.ones((50_000_000,)) * 2.0).eval()  # a 200 MB result computed by a program
    report["big_result_held_mb"] = round(settled_rss() - before, 1)
    del result
    report["big_result_left_mb"] = round(settled_rss() - before, 1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
