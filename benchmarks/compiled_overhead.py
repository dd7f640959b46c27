"""Workload 3 - compiled call overhead on tiny inputs: a ``tp.compile`` d 10-op function called with
already-resident 4x8 inputs, vs ``jax.jit`` of the same function (device arrays in, no transfer).

The functions themselves come from ``compiled_call_overhead.py`` (the stand-alone version of this
benchmark, with its own command line); this module runs them under the common harness.

Target: tripy <= 1.5x jax.jit.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from _harness import Row, interleaved, optional_module

SHAPE = (4, 8)


def run(quick: bool = False) -> List[Row]:
    import tripy as tp

    from compiled_call_overhead import jax_fn, tripy_fn  # written with tp.compile's author

    if not hasattr(tp, "compile"):
        raise RuntimeError("tp.compile is not available")
    rng = np.random.default_rng(0)
    x_np, y_np = (rng.uniform(0.5, 2.0, size=SHAPE).astype(np.float32) for _ in range(2))
    exe = tp.compile(tripy_fn, args=[tp.InputInfo(SHAPE, tp.float32), tp.InputInfo(SHAPE, tp.float32)])
    x_tp, y_tp = tp.Tensor(x_np).eval(), tp.Tensor(y_np).eval()
    impls: Dict[str, Any] = {"tripy": lambda: exe(x_tp, y_tp)}
    jax = optional_module("jax")
    if jax is not None:
        import jax.numpy as jnp

        jitted = jax.jit(jax_fn)
        x_jx, y_jx = jnp.asarray(x_np), jnp.asarray(y_np)
        impls["jax.jit"] = lambda: jitted(x_jx, y_jx)
        np.testing.assert_allclose(
            np.from_dlpack(impls["tripy"]()), np.asarray(impls["jax.jit"]()), rtol=1e-5, atol=1e-6
        )
    torch = optional_module("torch")
    if torch is not None:
        torch.set_grad_enabled(False)
        tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)

        def torch_fn() -> Any:
            a = tx + ty
            g = torch.maximum(torch.exp(torch.tanh(a * tx) - ty) / (tx + 2.0), ty)
            return torch.sqrt(torch.abs(g * 0.5)) + 1.0

        impls["torch"] = torch_fn
    times = interleaved(impls, number=500 if quick else 3000, rounds=5 if quick else 11, warmup=200)
    # Both tripy and jax dispatch asynchronously: the per-call time is the dispatch cost, what this measures.
    tripy = times.pop("tripy")
    return [
        Row(
            f"3. compiled call overhead: tp.compile'd 10-op fn, {SHAPE[0]}x{SHAPE[1]} inputs",
            tripy,
            times,
            "<= 1.5x jax.jit",
            reference="jax.jit",
            kind="time",
            limit=1.5,
        )
    ]


if __name__ == "__main__":
    import sys

    from run_all import print_table

    print_table(run(quick="--quick" in sys.argv))
