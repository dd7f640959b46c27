"""Workload 5 - throughput: a 1024x1024 float32 matmul and a 3x3 convolution (64 -> 64 channels,
batch 4, 56x56, padding 1, with bias), inputs already resident, result waited for.

tripy runs in eager mode (the compiled program comes from the cache; per-call overhead is tens of
microseconds against milliseconds of compute). Peers: NumPy (its BLAS; for the convolution an
im2col + tensordot, NumPy having no convolution), ``jax.jit`` (XLA:CPU, like tripy) and PyTorch on
the CPU if installed.

Target: tripy >= 0.9x the best peer (reported as best peer time / tripy time).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

import numpy as np

from _harness import Row, interleaved, optional_module

M = 1024
CONV_N, CONV_C, CONV_HW, CONV_K = 4, 64, 56, 3


def matmul_impls() -> Dict[str, Callable[[], Any]]:
    import tripy as tp

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((M, M)).astype(np.float32) for _ in range(2))
    ta, tb = tp.Tensor(a).eval(), tp.Tensor(b).eval()
    impls: Dict[str, Callable[[], Any]] = {"tripy": lambda: np.from_dlpack(ta @ tb), "numpy": lambda: a @ b}
    jax = optional_module("jax")
    if jax is not None:
        import jax.numpy as jnp

        f = jax.jit(lambda x, y: x @ y)
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        impls["jax.jit"] = lambda: f(ja, jb).block_until_ready()
    torch = optional_module("torch")
    if torch is not None:
        torch.set_grad_enabled(False)
        xa, xb = torch.from_numpy(a), torch.from_numpy(b)
        impls["torch"] = lambda: xa @ xb
    ref = a.astype(np.float64) @ b.astype(np.float64)
    for name, fn in impls.items():
        np.testing.assert_allclose(np.asarray(fn()), ref, rtol=1e-3, atol=1e-2, err_msg=name)
    return impls


def conv_numpy(x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
    p = CONV_K // 2
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, (CONV_K, CONV_K), axis=(2, 3))  # N C H W k k
    out = np.tensordot(windows, w, axes=([1, 4, 5], [1, 2, 3]))  # N H W O
    return out.transpose(0, 3, 1, 2) + bias[None, :, None, None]


def conv_impls() -> Dict[str, Callable[[], Any]]:
    import tripy as tp

    if not hasattr(tp, "Conv"):
        raise RuntimeError("tp.Conv is not available")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((CONV_N, CONV_C, CONV_HW, CONV_HW)).astype(np.float32)
    w = (rng.standard_normal((CONV_C, CONV_C, CONV_K, CONV_K)) * 0.05).astype(np.float32)
    bias = rng.standard_normal((CONV_C,)).astype(np.float32)
    pad = CONV_K // 2
    conv = tp.Conv(CONV_C, CONV_C, (CONV_K, CONV_K), padding=((pad, pad), (pad, pad)))
    conv.load_state_dict({"weight": w, "bias": bias})
    tx = tp.Tensor(x).eval()
    impls: Dict[str, Callable[[], Any]] = {
        "tripy": lambda: np.from_dlpack(conv(tx)),
        "numpy": lambda: conv_numpy(x, w, bias),
    }
    jax = optional_module("jax")
    if jax is not None:
        import jax.numpy as jnp
        from jax import lax

        f = jax.jit(
            lambda v, k, b: lax.conv_general_dilated(v, k, (1, 1), ((pad, pad), (pad, pad))) + b[None, :, None, None]
        )
        jx, jw, jbias = jnp.asarray(x), jnp.asarray(w), jnp.asarray(bias)
        impls["jax.jit"] = lambda: f(jx, jw, jbias).block_until_ready()
    torch = optional_module("torch")
    if torch is not None:
        torch.set_grad_enabled(False)
        import torch.nn.functional as F

        cx, cw, cb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
        impls["torch"] = lambda: F.conv2d(cx, cw, cb, padding=pad)
    ref = conv_numpy(x, w, bias)
    for name, fn in impls.items():
        np.testing.assert_allclose(np.asarray(fn()), ref, rtol=1e-3, atol=1e-3, err_msg=name)
    return impls


def _row(title: str, impls: Dict[str, Callable[[], Any]], quick: bool) -> Row:
    times = interleaved(impls, number=3 if quick else 5, rounds=5 if quick else 11, warmup=2, settle=0.2)
    tripy = times.pop("tripy")
    best = min(times, key=lambda k: times[k])
    return Row(title, tripy, times, ">= 0.9x best peer", kind="throughput", limit=0.9, note=f"best peer: {best}")


def run(quick: bool = False) -> List[Row]:
    rows = [_row(f"5a. throughput: {M}x{M} float32 matmul", matmul_impls(), quick)]
    title = f"5b. throughput: conv {CONV_K}x{CONV_K}, {CONV_C}->{CONV_C} ch, N={CONV_N}, {CONV_HW}x{CONV_HW}"
    try:
        rows.append(_row(title, conv_impls(), quick))
    except Exception as e:
        from _harness import skipped

        rows.append(skipped(title, f"{type(e).__name__}: {e}".splitlines()[0][:120]))
    return rows


if __name__ == "__main__":
    import sys

    from run_all import print_table

    print_table(run(quick="--quick" in sys.argv))
