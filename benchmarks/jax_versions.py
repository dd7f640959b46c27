"""tripy on the lock's newest jaxlib against jaxlib 0.6.2 (the newest the MLIR-TensorRT plugin accepts), in one run.

    uv run python benchmarks/jax_versions.py            # makes .venv-jax062 (scripts/jax062-env) if missing
    uv run python benchmarks/jax_versions.py --quick    # one round instead of three
    uv run python benchmarks/jax_versions.py --peers benchmarks/peers/.venv/bin/python   # + ONNX Runtime's session

Each round runs one child process per environment (alternating which goes first), and each child measures the
same tripy workloads in itself: compile times (GPT-2 small forward at T=128; the same model for every
sequence length 1..1024, until ``tp.compile`` returns and until its whole plan is ready; a new eager 10-op
graph) and per-call times (GPT-2 forward, KV-cache generation, ResNet-18 at batch 1, the eager 10-op loop, a
compiled call on tiny inputs). The table gives the medians over
rounds and newest / 0.6.2. With ``--peers`` (a Python with torch and onnxruntime, from
``benchmarks/peers/setup.sh``), ONNX Runtime's session creation for the same GPT-2 is measured too: the
reference for ``tp.compile``.

Targets (the issue that moved to the newest XLA): GPT-2 ``tp.compile`` within 1.2x of ONNX Runtime's session
creation; the eager cache miss at 15 ms or less; the 1..1024 range's whole plan at 25 s or less; no per-call
workload more than 5% slower than on 0.6.2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (key, label, unit, whether lower is better)
METRICS = [
    ("gpt2_compile", "GPT-2 small tp.compile, T=128", "s", True),
    ("gpt2_range_return", "GPT-2 small tp.compile, T=1..1024: returns", "s", True),
    ("gpt2_range_ready", "GPT-2 small tp.compile, T=1..1024: whole plan", "s", True),
    ("eager_miss", "eager cache miss (new 10-op graph)", "ms", True),
    ("gpt2_forward", "GPT-2 small forward, T=128", "ms", True),
    ("generation", "GPT-2 generation (16 + 64 tokens)", "tokens/s", False),
    ("resnet18", "ResNet-18, 1x3x224x224", "ms", True),
    ("eager_hit", "eager 10-op loop", "us", True),
    ("compiled_call", "compiled call, tiny inputs", "us", True),
    # The same small workloads through jax.jit in the same child: what XLA itself gained or lost between versions.
    ("eager_miss_jax", "  jax.jit: new 10-op graph, first call", "ms", True),
    ("eager_hit_jax", "  jax.jit: the 10-op loop", "us", True),
    ("compiled_call_jax", "  jax.jit: call, tiny inputs", "us", True),
]
SCALE = {"s": 1.0, "ms": 1e3, "us": 1e6, "tokens/s": 1.0}


def median_seconds(fn: Callable[[], Any], repeat: int, warmup: int = 2) -> float:
    from _harness import median_time

    for _ in range(warmup):
        fn()
    return median_time(fn, repeat)


def child() -> Dict[str, float]:
    """The workloads, measured in this process (seconds; tokens per second for generation)."""
    sys.path[:0] = [HERE, os.path.join(HERE, "peers"), os.path.join(ROOT, "examples", "gpt2")]
    import numpy as np

    import tripy as tp
    from _harness import disable_tripy_disk_cache
    from model import GPT, GPTConfig, random_state_dict

    disable_tripy_disk_cache()
    out: Dict[str, float] = {}
    config = GPTConfig(n_layer=12)
    model = GPT(config)
    model.load_state_dict(random_state_dict(config, seed=0))
    idx = np.random.default_rng(0).integers(0, config.vocab_size, size=(1, 128)).astype(np.int32)
    small = tp.LayerNorm(8)  # (one-time costs of the first compile in a process)
    small.initialize_dummy_parameters()
    tp.compile(small, args=[tp.InputInfo((2, 8), tp.float32)])

    start = time.perf_counter()
    exe = tp.compile(model, args=[tp.InputInfo(idx.shape, tp.int32)])
    out["gpt2_compile"] = time.perf_counter() - start
    x = tp.Tensor(idx)
    out["gpt2_forward"] = median_seconds(lambda: np.from_dlpack(exe(x)), 10)
    start = time.perf_counter()
    ranged = tp.compile(model, args=[tp.InputInfo((1, (1, 128, 1024)), tp.int32)])
    out["gpt2_range_return"] = time.perf_counter() - start
    ranged.wait()
    out["gpt2_range_ready"] = time.perf_counter() - start
    out["generation"] = generation_tokens_per_second(model)
    out["resnet18"] = resnet18_seconds()
    out.update(small_workloads())
    return out


def generation_tokens_per_second(model: Any) -> float:
    from run import cache_length, compile_kv_programs, generate_with_cache

    prompt, new_tokens = list(range(16)), 64
    prefill, decode = compile_kv_programs(model, len(prompt), cache_length(len(prompt), new_tokens, 1024))
    generate_with_cache(prefill, decode, prompt, new_tokens, len(prompt))  # (warm-up)
    seconds = median_seconds(lambda: generate_with_cache(prefill, decode, prompt, new_tokens, len(prompt)), 3, 0)
    return new_tokens / seconds


def resnet18_seconds() -> float:
    import numpy as np

    import tripy as tp
    from convnet import ResNet18, random_weights

    net = ResNet18()
    net.load_state_dict(random_weights(net))
    x = tp.Tensor(np.random.default_rng(1).normal(size=(1, 3, 224, 224)).astype(np.float32))
    exe = tp.compile(net, args=[tp.InputInfo((1, 3, 224, 224), tp.float32)])
    return median_seconds(lambda: np.from_dlpack(exe(x)), 10)


def small_workloads() -> Dict[str, float]:
    """The eager cache miss and hit, and the compiled call, from run_all's own workloads (tripy's column, and
    jax.jit's as ``<key>_jax``)."""
    import compiled_overhead
    import eager_cache_hit
    import eager_cache_miss

    rows = {
        "eager_miss": eager_cache_miss.run(quick=True)[0],
        "eager_hit": eager_cache_hit.run(quick=True)[0],
        "compiled_call": compiled_overhead.run(quick=True)[0],
    }
    times = {key: row.tripy for key, row in rows.items() if row.tripy is not None}
    times.update({f"{key}_jax": row.peers["jax.jit"] for key, row in rows.items() if row.peers.get("jax.jit")})
    return times


def onnx_session_seconds() -> Dict[str, float]:
    """ONNX Runtime's session creation for GPT-2 small, from an ONNX file exported beforehand (not timed)."""
    sys.path[:0] = [os.path.join(HERE, "peers"), os.path.join(ROOT, "examples", "gpt2")]
    import numpy as np
    import torch
    from gpt2 import torch_model
    from model import GPTConfig, random_state_dict
    from peer_utils import onnx_file, onnx_session

    config = GPTConfig(n_layer=12)
    net = torch_model(random_state_dict(config, seed=0), config)
    args = (torch.from_numpy(np.zeros((1, 128), np.int64)),)
    onnx_file(net, args, ["idx"], "gpt2_forward_session")
    times = []
    for _ in range(3):
        start = time.perf_counter()
        onnx_session(net, args, ["idx"], "gpt2_forward_session")
        times.append(time.perf_counter() - start)
    return {"onnx_session": statistics.median(times)}


def run_child(python: str, what: str) -> Dict[str, float]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")])))
    code = f"import json, jax_versions; print('RESULT ' + json.dumps(jax_versions.{what}()))"
    proc = subprocess.run([python, "-c", code], cwd=HERE, env=env, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])  # type: ignore[no-any-return]
    raise SystemExit(f"{python} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")


def version_of(python: str) -> str:
    return subprocess.run(
        [python, "-c", "import jaxlib; print(jaxlib.__version__)"], capture_output=True, text=True
    ).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round instead of three")
    parser.add_argument(
        "--old",
        help="the Python of a jaxlib 0.6.2 environment (default: .venv-jax062, made or "
        "refreshed by scripts/jax062-env)",
    )
    parser.add_argument("--peers", help="a Python with torch and onnxruntime, for ONNX Runtime's session creation")
    args = parser.parse_args()
    if args.old is None:
        subprocess.run([os.path.join(ROOT, "scripts", "jax062-env")], check=True)
        args.old = os.path.join(ROOT, ".venv-jax062", "bin", "python")
    args.old = os.path.abspath(args.old)  # (the children run in benchmarks/)
    pythons = {f"jaxlib {version_of(sys.executable)}": sys.executable, f"jaxlib {version_of(args.old)}": args.old}
    results: Dict[str, List[Dict[str, float]]] = {name: [] for name in pythons}
    for r in range(1 if args.quick else 3):
        for name in list(pythons) if r % 2 == 0 else list(pythons)[::-1]:
            print(f"round {r + 1}: {name} ...", flush=True)
            results[name].append(run_child(pythons[name], "child"))
    session = run_child(os.path.abspath(args.peers), "onnx_session_seconds")["onnx_session"] if args.peers else None
    report(results, session)


def report(results: Dict[str, List[Dict[str, float]]], session: "float | None") -> None:
    new, old = list(results)
    med = {name: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for name, runs in results.items()}
    print(f"\n{'workload':46} {new:>16} {old:>16}  new/old")
    for key, label, unit, lower_better in METRICS:
        a, b = med[new].get(key), med[old].get(key)
        if a is None or b is None:
            continue
        print(f"{label:46} {a * SCALE[unit]:>12.2f} {unit:<8} {b * SCALE[unit]:>12.2f} {unit:<8}  {a / b:.2f}x")
    print(f"\n{os.cpu_count()} cores; medians over {len(results[new])} round(s), each environment in its own process.")
    if session is not None:
        print(
            f"ONNX Runtime session creation, GPT-2 small: {session:.2f} s; tp.compile on {new}: "
            f"{med[new]['gpt2_compile'] / session:.2f}x of it (target <= 1.2x)"
        )


if __name__ == "__main__":
    main()
