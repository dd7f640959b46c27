"""Workload 7 - the persistent compilation cache: the first evaluation of a program in a *new process*,
with an empty cache directory (compile, then store) and with a warm one (load instead of compiling).

tripy: ``TRIPY_CACHE_DIR`` (eager mode, an MLP of 24 layers, ~100 ops). Peer: JAX's persistent
compilation cache (``jax_compilation_cache_dir``, thresholds set so every program is cached) for the
same network under ``jax.jit``. Each measurement is a fresh subprocess; the time is from just before
building the program to having the result as a NumPy array (imports excluded).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from typing import Dict, List

from _harness import Row, optional_module

LAYERS, WIDTH = 24, 256

_TRIPY = textwrap.dedent(f"""
    import json, time, numpy as np
    import tripy as tp
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(({WIDTH}, {WIDTH})).astype(np.float32) * 0.05 for _ in range({LAYERS})]
    x0 = rng.standard_normal((8, {WIDTH})).astype(np.float32)
    start = time.perf_counter()
    x = tp.Tensor(x0)
    for w in ws:
        h = x @ tp.Tensor(w)
        x = tp.tanh(h * 0.5 + 0.1) + x * 0.25
    out = np.from_dlpack(x)
    print(json.dumps({{"seconds": time.perf_counter() - start, "sum": float(out.sum())}}))
""")

_JAX = textwrap.dedent(f"""
    import json, sys, time, numpy as np
    import jax, jax.numpy as jnp
    jax.config.update("jax_compilation_cache_dir", sys.argv[1])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(({WIDTH}, {WIDTH})).astype(np.float32) * 0.05 for _ in range({LAYERS})]
    x0 = rng.standard_normal((8, {WIDTH})).astype(np.float32)
    def f(x, ws):
        for w in ws:
            x = jnp.tanh((x @ w) * 0.5 + 0.1) + x * 0.25
        return x
    start = time.perf_counter()
    out = np.asarray(jax.jit(f)(x0, ws))
    print(json.dumps({{"seconds": time.perf_counter() - start, "sum": float(out.sum())}}))
""")


def _run(code: str, cache_dir: str, env_cache: bool) -> float:
    env = dict(os.environ)
    env.pop("TRIPY_CACHE_DIR", None)
    if env_cache:
        env["TRIPY_CACHE_DIR"] = cache_dir
    out = subprocess.run(
        [sys.executable, "-c", code, cache_dir], env=env, capture_output=True, text=True, timeout=600, check=True
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])


def run(quick: bool = False) -> List[Row]:
    import tripy  # noqa: F401  (fail early, in this process, if tripy is broken)

    codes: Dict[str, str] = {"tripy": _TRIPY}
    if optional_module("jax") is not None:
        codes["jax.jit"] = _JAX
    repeat = 2 if quick else 3
    cold: Dict[str, List[float]] = {k: [] for k in codes}
    warm: Dict[str, List[float]] = {k: [] for k in codes}
    for _ in range(repeat):
        for name, code in codes.items():
            with tempfile.TemporaryDirectory() as d:
                cold[name].append(_run(code, d, env_cache=(name == "tripy")))
                warm[name].append(_run(code, d, env_cache=(name == "tripy")))
    c = {k: statistics.median(v) for k, v in cold.items()}
    w = {k: statistics.median(v) for k, v in warm.items()}
    ref = "jax.jit" if "jax.jit" in codes else None
    title = f"7. new process, first eval of a {LAYERS}-layer MLP"
    return [
        Row(f"{title}, empty disk cache", c.pop("tripy"), c, "(compile + store)", reference=ref, kind="time"),
        Row(
            f"{title}, warm disk cache",
            w.pop("tripy"),
            w,
            "warm << empty",
            reference=ref,
            kind="time",
            met_override=statistics.median(warm["tripy"]) < 0.5 * statistics.median(cold["tripy"]),
        ),
    ]


if __name__ == "__main__":
    from run_all import print_table

    print_table(run(quick="--quick" in sys.argv))
