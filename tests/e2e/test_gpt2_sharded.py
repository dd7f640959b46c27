"""The GPT-2 example split across 2 and 4 XLA:CPU host devices: tensor-parallel (examples/gpt2/tensor_parallel.py)
generates the same greedy tokens as one device, with the KV cache split by heads and kept split from one decode
step to the next; data-parallel (the batch split) gives the same logits. Each runs in a fresh process with
``XLA_FLAGS=--xla_force_host_platform_device_count=N``."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

GPT2_DIR = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpt2"

_SCRIPT = """
import sys
import numpy as np
import tripy as tp
sys.path.insert(0, GPT2_DIR)
import tensor_parallel
from model import GPT, GPTConfig, random_state_dict
from tripy_frontend.compiler import spmd

# Tensor parallel: the example's own check (same tokens as one device), counting data split again at a call.
resplit = []
place = spmd.place
def counting_place(buffer, layout, mesh, device):
    out = place(buffer, layout, mesh, device)
    resplit.append(out is not buffer and len(buffer.sharding.device_set) > 1)
    return out
spmd.place = counting_place
tensor_parallel.main(["--devices", str(NUM_DEVICES)])
assert resplit and not any(resplit), "a split result (the KV cache) was split again at a call"

# Data parallel: the batch split over the mesh, every weight whole on each device.
config = GPTConfig(vocab_size=128, block_size=32, n_layer=2, n_head=4, n_embd=64)
model = GPT(config)
model.load_state_dict(random_state_dict(config, seed=1, std=0.2))
idx = np.random.default_rng(0).integers(0, config.vocab_size, size=(NUM_DEVICES, 8)).astype(np.int32)
expected = np.from_dlpack(model(tp.Tensor(idx)))
mesh = tp.Mesh((NUM_DEVICES,), ("data",))
exe = tp.compile(model, args=[tp.InputInfo((NUM_DEVICES, 8), tp.int32, sharding=tp.Sharding(mesh, ("data", None)))])
assert np.allclose(np.from_dlpack(exe(tp.Tensor(idx))), expected, rtol=1e-4, atol=1e-4)
print("ok")
"""


@pytest.mark.parametrize("n", [2, 4])
def test_gpt2_split_across_devices_matches_one_device(n: int) -> None:
    code = _SCRIPT.replace("GPT2_DIR", repr(str(GPT2_DIR))).replace("NUM_DEVICES", str(n))
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")
    assert f"{n} devices:" in done.stdout
