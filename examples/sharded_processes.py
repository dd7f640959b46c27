"""One sharded program run by several processes: each holds a piece of a weight, XLA's collectives combine them.

Every process runs this same script (the SPMD convention: the same program, the same arguments); process 0 also
runs the coordination service. Each process has the CPU devices its XLA_FLAGS give it (1 by default), and the
mesh spans the devices of all of them. The weight is split by columns; the row sums of ``relu(x @ w)`` need every
column, so XLA adds them across the processes (an all-reduce, over gloo's TCP collectives) and every process
prints the whole result. With no ``--process-id`` it runs as one process (give it 2 host devices) for comparison.

    python examples/sharded_processes.py --process-id 0 --coordinator 127.0.0.1:12345 &
    python examples/sharded_processes.py --process-id 1 --coordinator 127.0.0.1:12345
    XLA_FLAGS=--xla_force_host_platform_device_count=2 python examples/sharded_processes.py
"""

from __future__ import annotations

import argparse
import json
from typing import Sequence

import numpy as np

import tripy as tp


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--process-id", type=int, help="this process's number (leave out: one process)")
    parser.add_argument("--processes", type=int, default=2, help="how many processes take part (default 2)")
    parser.add_argument("--coordinator", default="127.0.0.1:12345", help="host:port of process 0's service")
    args = parser.parse_args(list(argv) or None)
    if args.process_id is not None:
        tp.initialize_distributed(args.coordinator, args.processes, args.process_id)  # before anything runs

    mesh = tp.Mesh((2,), ("model",))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 8)).astype(np.float32)
    w = rng.normal(size=(8, 6)).astype(np.float32)
    w_split = tp.shard(tp.Tensor(w), tp.Sharding(mesh, (None, "model")))  # each device: 3 of the 6 columns
    row_sums = tp.compile(lambda a: tp.sum(tp.relu(a @ w_split), dim=1), args=[tp.InputInfo((4, 8), tp.float32)])
    out = np.from_dlpack(row_sums(tp.Tensor(x)))
    assert np.allclose(out, np.maximum(x @ w, 0).sum(1), rtol=1e-5)

    # A result left split holds only this process's pieces here: reading it whole is an error in a process of many.
    columns = tp.compile(lambda a: a @ w_split, args=[tp.InputInfo((4, 8), tp.float32)])(tp.Tensor(x))
    try:
        readable = np.allclose(np.from_dlpack(columns), x @ w, rtol=1e-5)
    except tp.TripyException:
        readable = False
    print(json.dumps({"row_sums": out.tolist(), "split_result_readable": readable}))


if __name__ == "__main__":
    main()
