"""Where GPT-2 small's forward pass spends its time, by line of examples/gpt2/model.py (tp.profile: XLA's profiler).

    python benchmarks/profile_gpt2.py                 # batch 1, sequence 128, float32, random weights
    python benchmarks/profile_gpt2.py --seq 64 --calls 10 --trace gpt2_trace.json

Prints the profile's table (tp.profile) and, with --trace, writes its Chrome trace (https://ui.perfetto.dev).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "gpt2"))

import tripy as tp  # noqa: E402
from model import GPT, GPTConfig, random_state_dict  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--trace", default=None, help="write the Chrome trace here")
    args = parser.parse_args()
    config = GPTConfig()
    model = GPT(config)
    model.load_state_dict(random_state_dict(config))
    exe = tp.compile(model, args=[tp.InputInfo((1, args.seq), tp.int32)])
    idx = tp.Tensor(np.random.default_rng(0).integers(0, config.vocab_size, (1, args.seq), dtype=np.int32))
    profile = tp.profile(exe, idx, calls=args.calls, warmup=2)
    print(profile)
    if args.trace:
        profile.save(args.trace)


if __name__ == "__main__":
    main()
