"""What splitting a program across host devices costs: a tensor-parallel MLP on 1, 2 and 4 XLA:CPU host devices.

The MLP is Megatron's pair, ``relu(x @ W1) @ W2``: W1 split by columns, W2 by rows, so each call ends with one
all-reduce of the ``[rows, width]`` result across the devices. Host devices are threads of one process sharing
the machine's cores (``XLA_FLAGS=--xla_force_host_platform_device_count=N``), so on a 2-core machine no speedup
is expected: what the numbers show is the partitioned program's overhead (launching N pieces, the all-reduce),
against the same program on one device. ``jax.jit`` with the same shardings runs in the same process as a peer.

Each device count needs its own process (the flag is read when the runtime starts); the rounds alternate between
the counts, and within a process tripy and jax.jit are interleaved. Printed: median milliseconds per call, each
count's time over one device's, and tripy's time over jax.jit's.

    uv run python benchmarks/sharding_overhead.py [--rounds 3] [--rows 8] [--width 512]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Dict, List

COUNTS = (1, 2, 4)


def child(n: int, rows: int, width: int, number: int) -> Dict[str, float]:
    """Median seconds per call of tripy and jax.jit on `n` host devices (this process has them)."""
    import numpy as np

    import jax
    import tripy as tp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    from _harness import interleaved

    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, width)).astype(np.float32)
    w1 = rng.normal(size=(width, 4 * width)).astype(np.float32) / width**0.5
    w2 = rng.normal(size=(4 * width, width)).astype(np.float32) / width**0.5

    mesh = tp.Mesh((n,), ("model",))
    a = tp.shard(tp.Tensor(w1), tp.Sharding(mesh, (None, "model")))
    b = tp.shard(tp.Tensor(w2), tp.Sharding(mesh, ("model", None)))
    exe = tp.compile(lambda t: tp.relu(t @ a) @ b, args=[tp.InputInfo((rows, width), tp.float32)])
    xt = tp.shard(tp.Tensor(x), tp.Sharding(mesh, (None, None)))  # (on every device already, as jax's x is)

    jmesh = Mesh(np.array(jax.devices()[:n]), ("model",))
    ja = jax.device_put(w1, NamedSharding(jmesh, P(None, "model")))
    jb = jax.device_put(w2, NamedSharding(jmesh, P("model", None)))
    jx = jax.device_put(x, NamedSharding(jmesh, P()))
    f = jax.jit(lambda t, u, v: jax.nn.relu(t @ u) @ v)
    assert np.allclose(np.from_dlpack(exe(xt)), np.asarray(f(jx, ja, jb)), rtol=1e-4, atol=1e-4)

    def run_tripy() -> None:
        np.from_dlpack(exe(xt))  # (read back: the result is gathered, as a user would read it)

    def run_jax() -> None:
        np.asarray(f(jx, ja, jb))

    return interleaved({"tripy": run_tripy, "jax.jit": run_jax}, number=number, rounds=5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--number", type=int, default=50, help="calls per timed batch")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.rows, args.width, args.number)))
        return
    samples: Dict[int, Dict[str, List[float]]] = {n: {"tripy": [], "jax.jit": []} for n in COUNTS}
    for r in range(args.rounds):
        for n in COUNTS[r % len(COUNTS) :] + COUNTS[: r % len(COUNTS)]:
            env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}")
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    str(n),
                    "--rows",
                    str(args.rows),
                    "--width",
                    str(args.width),
                    "--number",
                    str(args.number),
                ],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                cwd=os.path.dirname(os.path.abspath(__file__)),
            )
            for name, seconds in json.loads(done.stdout.strip().splitlines()[-1]).items():
                samples[n][name].append(seconds)
    med = {n: {k: statistics.median(v) for k, v in s.items()} for n, s in samples.items()}
    print(
        f"tensor-parallel MLP, x [{args.rows}, {args.width}] @ [{args.width}, {4 * args.width}] @ "
        f"[{4 * args.width}, {args.width}], {args.rounds} rounds, {os.cpu_count()} cores"
    )
    print(f"{'devices':>8} {'tripy ms':>9} {'vs 1 dev':>9} {'jax.jit ms':>11} {'vs 1 dev':>9} {'tripy/jax':>10}")
    for n in COUNTS:
        t, j = med[n]["tripy"], med[n]["jax.jit"]
        print(
            f"{n:>8} {t * 1e3:>9.3f} {t / med[1]['tripy']:>8.2f}x {j * 1e3:>11.3f} {j / med[1]['jax.jit']:>8.2f}x "
            f"{t / j:>9.2f}x"
        )


if __name__ == "__main__":
    main()
