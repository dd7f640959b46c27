"""GPT-2 forward latency on the CPU: tripy (compiled) vs NumPy vs jax.jit (and PyTorch if installed).

Every contender runs the same network with the same random weights in this one process: tripy runs
``examples/gpt2/model.py``; NumPy and JAX run ``examples/gpt2/reference.py`` (one implementation
written against an array module); PyTorch runs a transcription of it. Weights are program arguments
for tripy and JAX alike (nothing is constant-folded). Outputs are cross-checked before timing.

    python benchmarks/gpt2_forward.py                      # GPT-2 small, batch 1, sequence 128, float32
    python benchmarks/gpt2_forward.py --seq 64 --iters 10
    python benchmarks/gpt2_forward.py --classic-runtime    # also jax.jit compiled with tripy's XLA options

The contenders are timed interleaved (one call of each per round) so that load from other processes
affects all alike. Prints the median latency of each, its throughput in tokens/s, and tripy's speed
relative to each (>1.0x means tripy is faster).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "gpt2"))

import reference  # noqa: E402
from model import GPT, GPTConfig, random_state_dict  # noqa: E402


def measure(runs: Dict[str, Callable[[], Any]], warmup: int, iters: int, settle: float = 0.1) -> Dict[str, List[float]]:
    """Time every contender `iters` times, interleaved (one call of each per round), so that load from
    other processes on the machine affects all of them alike. Each call starts `settle` seconds after the
    previous one: thread pools (OpenBLAS's, XLA's) spin for a while after their work, and on a 2-core
    machine they would take a core from whichever contender runs next (up to 25% of its time)."""
    for run in runs.values():
        for _ in range(warmup):
            run()
    times: Dict[str, List[float]] = {name: [] for name in runs}
    for _ in range(iters):
        for name, run in runs.items():
            time.sleep(settle)
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return times


# The XLA options tripy compiles with (tripy_backend.cpu_plan.compile_options), for jax.jit: XLA:CPU's
# classic runtime (instead of the thunk runtime that is the default in jaxlib 0.6), whose matrix products go
# to oneDNN; excess precision disallowed; XNNPACK fusions need the thunk runtime, so they are off. tripy's
# levels 0-3 (the default 3) also generate code with LLVM -O2; 4-5 keep XLA's -O3.
CLASSIC_RUNTIME = {
    "xla_cpu_use_thunk_runtime": False,
    "xla_allow_excess_precision": False,
    "xla_cpu_use_xnnpack": False,
}
TRIPY_DEFAULT_OPTIONS = dict(CLASSIC_RUNTIME, xla_backend_optimization_level=2)


def tripy_contender(
    state: Dict[str, np.ndarray], config: GPTConfig, idx: np.ndarray, optimization_level: int = 3
) -> Tuple[Callable[[], Any], Any]:
    import tripy as tp

    model = GPT(config)
    model.load_state_dict(state)
    start = time.perf_counter()
    # (XLA options: TRIPY_DEFAULT_OPTIONS at levels 0-3, CLASSIC_RUNTIME at 4-5.)
    exe = tp.compile(model, optimization_level=optimization_level, args=[tp.InputInfo(idx.shape, tp.int32)])
    print(f"  tripy (optimization_level={optimization_level}): compiled in {time.perf_counter() - start:.1f} s")
    x = tp.Tensor(idx)

    def run() -> np.ndarray:
        return np.from_dlpack(exe(x))  # zero-copy; waits for the result

    return run, run()


def jax_contender(
    state: Dict[str, np.ndarray], config: GPTConfig, idx: np.ndarray, xla_options: Optional[Dict[str, Any]] = None
) -> Tuple[Callable[[], Any], Any]:
    import jax
    import jax.numpy as jnp

    params = {k: jnp.asarray(v) for k, v in state.items()}
    jitted = jax.jit(lambda p, i: reference.forward(p, i, config.n_layer, config.n_head, config.layer_norm_eps, xp=jnp))
    x = jnp.asarray(idx)
    start = time.perf_counter()
    fn = jitted.lower(params, x).compile(compiler_options=xla_options)
    fn(params, x).block_until_ready()
    print(
        f"  jax.jit{' (XLA options ' + str(xla_options) + ')' if xla_options else ''}: compiled in "
        f"{time.perf_counter() - start:.1f} s"
    )

    def run() -> Any:
        return fn(params, x).block_until_ready()

    return run, np.asarray(run())


def numpy_contender(state: Dict[str, np.ndarray], config: GPTConfig, idx: np.ndarray) -> Tuple[Callable[[], Any], Any]:
    def run() -> np.ndarray:
        return reference.forward(state, idx, config.n_layer, config.n_head, config.layer_norm_eps, xp=np)

    return run, run()


def torch_contender(
    state: Dict[str, np.ndarray], config: GPTConfig, idx: np.ndarray
) -> Optional[Tuple[Callable[[], Any], Any]]:
    try:
        import torch
    except ImportError:
        return None
    import math

    p = {k: torch.from_numpy(v) for k, v in state.items()}
    x = torch.from_numpy(idx.astype(np.int64))
    F = torch.nn.functional
    hd = config.n_embd // config.n_head

    @torch.inference_mode()
    def run() -> Any:
        B, T = x.shape
        h = p["transformer.wte.weight"][x] + p["transformer.wpe.weight"][:T]
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        for i in range(config.n_layer):
            pre = f"transformer.h.{i}."
            a = F.layer_norm(h, (config.n_embd,), p[pre + "ln_1.weight"], p[pre + "ln_1.bias"], config.layer_norm_eps)
            qkv = F.linear(a, p[pre + "attn.c_attn.weight"], p[pre + "attn.c_attn.bias"])
            q, k, v = qkv.view(B, T, 3, config.n_head, hd).permute(2, 0, 3, 1, 4)
            att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(hd))
            att = att.masked_fill(~mask, float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, config.n_embd)
            h = h + F.linear(y, p[pre + "attn.c_proj.weight"], p[pre + "attn.c_proj.bias"])
            a = F.layer_norm(h, (config.n_embd,), p[pre + "ln_2.weight"], p[pre + "ln_2.bias"], config.layer_norm_eps)
            a = F.gelu(F.linear(a, p[pre + "mlp.c_fc.weight"], p[pre + "mlp.c_fc.bias"]), approximate="tanh")
            h = h + F.linear(a, p[pre + "mlp.c_proj.weight"], p[pre + "mlp.c_proj.bias"])
        h = F.layer_norm(
            h, (config.n_embd,), p["transformer.ln_f.weight"], p["transformer.ln_f.bias"], config.layer_norm_eps
        )
        return F.linear(h, p["lm_head.weight"])

    return run, run().numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--skip", default="", help="comma-separated contenders to skip (tripy,jax,numpy,torch)")
    parser.add_argument(
        "--classic-runtime",
        action="store_true",
        help="also run jax.jit compiled with the XLA options tripy uses at level 3 and at level 5",
    )
    args = parser.parse_args()

    config = GPTConfig(n_layer=args.layers)
    print(
        f"GPT-2 (layers={config.n_layer}, dims={config.n_embd}, heads={config.n_head}, vocab={config.vocab_size}), "
        f"batch {args.batch}, sequence {args.seq}, float32, CPU ({os.cpu_count()} cores)"
    )
    state = random_state_dict(config, seed=0)
    idx = np.random.default_rng(0).integers(0, config.vocab_size, size=(args.batch, args.seq)).astype(np.int32)

    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    makers: List[Tuple[str, Callable[..., Any]]] = [
        ("tripy", tripy_contender),
        ("tripy[O5]", lambda s, c, i: tripy_contender(s, c, i, optimization_level=5)),
        ("jax.jit", jax_contender),
        ("numpy", numpy_contender),
        ("pytorch", torch_contender),
    ]
    if args.classic_runtime:
        makers[3:3] = [
            ("jax[=tripy]", lambda s, c, i: jax_contender(s, c, i, xla_options=TRIPY_DEFAULT_OPTIONS)),
            ("jax[=O5]", lambda s, c, i: jax_contender(s, c, i, xla_options=CLASSIC_RUNTIME)),
        ]
    runs: Dict[str, Callable[[], Any]] = {}
    outputs: Dict[str, np.ndarray] = {}
    for name, make in makers:
        if name.split(".")[0].split("[")[0] in skip or name in skip:
            continue
        made = make(state, config, idx)
        if made is None:
            print(f"  {name}: not installed, skipped")
            continue
        runs[name], out = made
        outputs[name] = np.asarray(out)

    if "tripy" in outputs:
        for name, out in outputs.items():
            if name != "tripy":
                diff = float(np.abs(out - outputs["tripy"]).max())
                print(f"  max |tripy - {name}| = {diff:.2e}")
                assert np.allclose(out, outputs["tripy"], rtol=1e-3, atol=1e-3), f"tripy and {name} disagree"

    times = measure(runs, args.warmup, args.iters)
    results = {name: statistics.median(t) for name, t in times.items()}
    tokens = args.batch * args.seq
    print(f"\n{'contender':<15} {'median ms':>10} {'min ms':>8} {'tokens/s':>10} {'tripy speed vs it':>18}")
    for name, t in results.items():
        ratio = f"{t / results['tripy']:.2f}x" if "tripy" in results else "-"
        print(f"{name:<15} {t * 1e3:>10.1f} {min(times[name]) * 1e3:>8.1f} {tokens / t:>10.0f} {ratio:>18}")
    if "tripy" in results and "jax.jit" in results:
        best = min((t, n) for n, t in results.items() if not n.startswith("tripy"))
        print(
            f"\ntripy (defaults) vs jax.jit (JAX's defaults): {results['jax.jit'] / results['tripy']:.2f}x; "
            f"vs the fastest peer ({best[1]}): {best[0] / results['tripy']:.2f}x"
        )
    for mine, theirs in (("tripy", "jax[=tripy]"), ("tripy[O5]", "jax[=O5]")):
        if mine in results and theirs in results:
            print(f"same XLA options on both sides: {mine} vs {theirs}: {results[theirs] / results[mine]:.2f}x")


if __name__ == "__main__":
    main()
