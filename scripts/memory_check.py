"""Resident memory under repeated work: prints one JSON line with the growth (MB) of each phase after its
warm-up, and what dropping a 200 MB tensor gives back. tests/reliability/test_memory.py runs it with small
counts (and a program cache of a few entries); the full counts are the defaults:

    uv run python scripts/memory_check.py     # 10,000 eager evals, 10,000 new shapes, 1,000 calls, a range sweep

New shapes: eager programs of 10,000 new input shapes, each compiled; the default cache keeps 512, so from
the 513th on each new program evicts one. Reported: resident memory at each 1,000 shapes
(``new_shapes_rss_mb``), and the growth from shape 5,000 to the last (``new_shapes_plateau_growth_mb``,
under 20 MB is the goal). Range sweep: one executable compiled for a range of sizes, called at every size of
the range, twice to settle, then three times measured; the smallest growth of a measured sweep
(``range_sweep_growth_mb``: a leak grows every sweep).
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
    parser.add_argument("--new-shapes", type=int, default=10000, help="eager evaluations at new shapes (compiles)")
    parser.add_argument("--range-max", type=int, default=512, help="range sweep: sizes 1..N of one executable")
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
    new_shapes(args.new_shapes, report)
    range_sweep(args.range_max, report)
    exe = tp.compile(
        lambda a, b: tp.tanh(a @ b) + 1.0, args=[tp.InputInfo((16, 16), tp.float32), tp.InputInfo((16, 16), tp.float32)]
    )
    x = tp.Tensor(rng.standard_normal((16, 16), dtype=np.float32))
    measure("calls", lambda i: np.from_dlpack(exe(x, x)), args.calls, 200)

    # A 200 MB tensor (the NumPy array is a temporary), then a 200 MB result computed by a program.
    big_tensor(report, "big_tensor", lambda: tp.Tensor(np.ones((50_000_000,), np.float32)))
    big_tensor(report, "big_result", lambda: (tp.ones((50_000_000,)) * 2.0).eval())
    print(json.dumps(report))


def big_tensor(report: dict, name: str, make) -> None:  # type: ignore[no-untyped-def]
    """What holding one big tensor costs and what dropping it gives back. One tensor is made and dropped first,
    so that compiling its program (and the cache evicting another's) happens outside the measurement."""
    make()
    before = settled_rss()
    tensor = make()
    report[f"{name}_held_mb"] = round(settled_rss() - before, 1)
    del tensor
    report[f"{name}_left_mb"] = round(settled_rss() - before, 1)


def new_shapes(count: int, report: dict) -> None:
    """Eager programs of `count` new shapes: resident memory every 1,000 (and at the end), and the growth from
    the middle to the end, once the program cache has turned over (its first fill is the warm-up)."""
    import tripy as tp

    marks = {}
    middle = count // 2
    for i in range(count):
        np.from_dlpack(tp.exp(tp.ones((i + 1, 3))) * 2.0)
        if (i + 1) % 1000 == 0 or i + 1 in (middle, count):
            marks[i + 1] = round(settled_rss(), 1)
    report["new_shapes_count"] = count
    report["new_shapes_rss_mb"] = marks
    report["new_shapes_plateau_growth_mb"] = round(marks[count] - marks[middle], 1)


def range_sweep(hi: int, report: dict) -> None:
    """One executable for sizes 1..hi (a few bounded programs) called at every size, two sweeps to settle (the
    second is the first to run the static programs the first one's shapes got), then three measured: the smallest
    growth of the three (a leak grows every sweep; a one-off allocation, such as a static program that lands late
    on a loaded machine, once)."""
    import tripy as tp

    exe = tp.compile(
        lambda a: tp.tanh(a) * 2.0 + tp.sum(a, dim=0), args=[tp.InputInfo(((1, hi // 2, hi), 8), tp.float32)]
    )

    def sweep() -> None:
        for n in range(1, hi + 1):
            np.from_dlpack(exe(tp.Tensor(np.full((n, 8), 0.5, np.float32))))

    sweep()
    exe.wait()  # (a cheap program: the first sweep's shapes got static programs, compiled in the background)
    sweep()  # (their first calls: each program's launcher and argument checks are made once)
    exe.wait()
    marks = [settled_rss()]
    for _ in range(3):
        sweep()
        marks.append(settled_rss())
    report["range_sweep_sizes"] = hi
    report["range_sweep_growth_mb"] = round(min(b - a for a, b in zip(marks, marks[1:])), 1)


if __name__ == "__main__":
    main()
