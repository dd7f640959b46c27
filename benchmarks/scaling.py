"""Workload 6 - tracing and lowering are linear in graph size: the time to build, trace and lower
(Trace -> FlatIR -> StableHLO, no XLA compile) a chain of N ops, for N and 2N.

A linear pipeline takes ~2x as long for 2N ops as for N. ``jax.jit(f).trace(x).lower()`` of the same
chain is the peer. (tests/trace/test_linear_lowering.py checks the same property without timing.)
Times are this process's CPU time (time.process_time: single-threaded Python work, so it is the work
done, and less disturbed than wall time by other processes on a shared machine), best of 7 runs.
"""

from __future__ import annotations

import gc
import time
from typing import Any, Callable, Dict, List

import numpy as np

from _harness import Row, optional_module

SIZES = (1000, 2000, 4000)


def chain(x: Any, w: Any, n: int, tanh: Callable[[Any], Any]) -> Any:
    for i in range(n):
        k = i % 4
        x = x + w if k == 0 else x * w if k == 1 else tanh(x) if k == 2 else x @ w
    return x


def tripy_time(n: int) -> float:
    import tripy as tp
    from tripy_trace.trace import Trace

    x, w = tp.Tensor(np.ones((4, 4), np.float32) * 0.1).eval(), tp.Tensor(np.ones((4, 4), np.float32) * 0.1).eval()
    gc.collect()
    start = time.process_time()
    y = chain(x, w, n, tp.tanh)  # what the user's code does
    trace = Trace([y.trace_tensor])  # what evaluation does before compiling
    trace.cache_key()
    trace.to_flat_ir().to_mlir()
    return time.process_time() - start


def jax_time(n: int) -> float:
    import jax
    import jax.numpy as jnp

    x = jnp.ones((4, 4), jnp.float32) * 0.1
    gc.collect()
    start = time.process_time()
    jax.jit(lambda v: chain(v, v, n, jnp.tanh)).trace(x).lower()
    return time.process_time() - start


def run(quick: bool = False) -> List[Row]:
    impls: Dict[str, Callable[[int], float]] = {"tripy": tripy_time}
    if optional_module("jax") is not None:
        impls["jax.jit"] = jax_time
    repeat = 3 if quick else 7
    med: Dict[str, Dict[int, float]] = {name: {} for name in impls}
    for n in SIZES:
        samples: Dict[str, List[float]] = {name: [] for name in impls}
        for _ in range(repeat):
            for name, fn in impls.items():
                samples[name].append(fn(n))
        for name in impls:
            med[name][n] = min(samples[name])  # the least-disturbed run: this measures work, not waiting
    rows = []
    for n in SIZES:
        rows.append(
            Row(
                f"6. trace + lower a chain of {n} ops (no XLA compile)",
                med["tripy"][n],
                {k: v[n] for k, v in med.items() if k != "tripy"},
                "linear in N",
                reference="jax.jit" if "jax.jit" in med else None,
                kind="time",
            )
        )
    for small, large in zip(SIZES, SIZES[1:]):
        factors = {name: med[name][large] / med[name][small] for name in med}
        text = ", ".join(f"{name} x{f:.2f}" for name, f in factors.items())
        rows.append(
            Row(
                f"6. doubling the graph: {small} -> {large} ops",
                med["tripy"][large],
                {k: v[large] for k, v in med.items() if k != "tripy"},
                "~2x time for 2x ops",
                kind="time",
                ratio_text=text,
                met_override=factors["tripy"] < 2.4,
            )
        )
    return rows


if __name__ == "__main__":
    import sys

    from run_all import print_table

    print_table(run(quick="--quick" in sys.argv))
