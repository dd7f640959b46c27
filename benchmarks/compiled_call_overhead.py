"""Per-call time of a compiled 10-op function on small inputs: tripy's tp.compile vs jax.jit.

Both run on XLA:CPU in this process. The two functions compute the same thing with the same 10
elementwise ops; each is called many times with already-resident inputs (the results are dropped, as
in a loop that consumes them later). Timing rounds alternate between the two, so machine noise hits
both alike. The ratio is taken between the best rounds (noise only ever adds time); the median
rounds are shown too.

    uv run python benchmarks/compiled_call_overhead.py [--calls N] [--rounds R] [--shape 4x8]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable, List

import numpy as np


# The same 10 ops on both sides: add, mul, tanh, sub, exp, div, maximum, mul, sqrt, add (inputs are
# positive, so every step is defined). `lib` is tripy or jax.numpy.
def expression(x: Any, y: Any, lib: Any) -> Any:
    a = x + y
    b = a * x
    c = lib.tanh(b)
    d = c - y
    e = lib.exp(d)
    f = e / x
    g = lib.maximum(f, y)
    h = g * 0.5
    i = lib.sqrt(h)
    return i + 1.0


def tripy_fn(x: Any, y: Any) -> Any:
    import tripy as tp

    return expression(x, y, tp)


def jax_fn(x: Any, y: Any) -> Any:
    import jax.numpy as jnp

    return expression(x, y, jnp)


def per_call_us(call: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls per timing round")
    parser.add_argument("--rounds", type=int, default=21, help="interleaved timing rounds")
    parser.add_argument("--shape", default="4x8", help="input shape, e.g. 4x8")
    opts = parser.parse_args()
    shape = tuple(int(s) for s in opts.shape.split("x"))

    import jax
    import jax.numpy as jnp

    import tripy as tp

    rng = np.random.default_rng(0)
    x_np = rng.uniform(0.5, 2.0, size=shape).astype(np.float32)
    y_np = rng.uniform(0.5, 2.0, size=shape).astype(np.float32)

    exe = tp.compile(tripy_fn, args=[tp.InputInfo(shape, tp.float32), tp.InputInfo(shape, tp.float32)])
    x_tp, y_tp = tp.Tensor(x_np).eval(), tp.Tensor(y_np).eval()

    jitted = jax.jit(jax_fn)
    x_jx, y_jx = jnp.asarray(x_np), jnp.asarray(y_np)

    # Same results (and warm-up: compile, first-call caches).
    expected = np.asarray(jitted(x_jx, y_jx))
    got = np.from_dlpack(exe(x_tp, y_tp))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)

    def run_tripy() -> Any:
        return exe(x_tp, y_tp)

    def run_jax() -> Any:
        return jitted(x_jx, y_jx)

    for _ in range(2000):
        run_tripy()
        run_jax()
    # Both dispatch asynchronously; make sure outstanding work is done before timing.
    np.from_dlpack(run_tripy())
    run_jax().block_until_ready()

    tripy_times: List[float] = []
    jax_times: List[float] = []
    for _ in range(opts.rounds):  # interleaved, so machine noise hits both alike
        tripy_times.append(per_call_us(run_tripy, opts.calls))
        jax_times.append(per_call_us(run_jax, opts.calls))
    best_tp, best_jx = min(tripy_times), min(jax_times)
    med_tp, med_jx = statistics.median(tripy_times), statistics.median(jax_times)
    print(
        f"input shape {list(shape)}, float32, 10 elementwise ops, {opts.rounds} rounds x {opts.calls} calls "
        f"(jax {jax.__version__}, XLA:CPU)"
    )
    print(f"  tripy  tp.compile : best {best_tp:6.2f} us/call   median {med_tp:6.2f}")
    print(f"  jax    jax.jit    : best {best_jx:6.2f} us/call   median {med_jx:6.2f}")
    print(f"  ratio tripy / jax.jit = {best_tp / best_jx:.2f}x   (medians: {med_tp / med_jx:.2f}x; target <= 1.5x)")


if __name__ == "__main__":
    main()
