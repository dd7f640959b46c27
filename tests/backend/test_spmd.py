"""SPMD programs in the backend: a hand-written StableHLO module annotated with ``tripy_flatir.sharding``, compiled
over 2 and 4 XLA:CPU host devices, against NumPy. Each case runs in a fresh process: the host device count
(``XLA_FLAGS=--xla_force_host_platform_device_count=N``) is read when the runtime starts."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tripy_flatir.sharding import Layout

_PROGRAM = """
import numpy as np
from jax.extend.mlir import ir
from tripy_flatir.device import CPU
from tripy_flatir.mlir_utils import bytecode, context
from tripy_flatir.sharding import Layout, annotate
from tripy_backend import compile, memory

text = '''
func.func public @main(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %1 = stablehlo.add %0, %0 : tensor<4x6xf32>
  return %0, %1 : tensor<4x6xf32>, tensor<4x6xf32>
}'''
n = NUM
mesh = ((2, n // 2), ("data", "model"))
lx, lw = Layout(*mesh, ("data", None)), Layout(*mesh, (None, "model"))
with context():
    module = ir.Module.parse(text)
    annotate(module, [lx, lw], n)
    data = bytecode(module)
program = compile(data, [(4, 8), (8, 6)], CPU, num_devices=n)
x = np.arange(32, dtype=np.float32).reshape(4, 8)
w = np.arange(48, dtype=np.float32).reshape(8, 6) - 20
bx, bw = memory.to_devices(x, lx, CPU), memory.to_devices(w, lw, CPU)
assert memory.is_sharded(bx) and memory.has_layout(bw, lw, CPU) and not memory.has_layout(bw, lx, CPU)
for _ in range(2):  # (the second run takes the launcher's fast path)
    product, twice = program([bx, bw])
    assert np.array_equal(memory.to_numpy(product), x @ w) and np.array_equal(memory.to_numpy(twice), 2 * (x @ w))
    assert memory.is_sharded(product)
print("ok")
"""


def run_on_devices(n: int, code: str) -> str:
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}")
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("n", [2, 4])
def test_spmd_program_matches_numpy(n: int) -> None:
    assert run_on_devices(n, _PROGRAM.replace("NUM", str(n))).strip().endswith("ok")


@pytest.mark.parametrize(
    "spec,text",
    [
        ((None, None), "{replicated}"),
        (("model", None), "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"),
        (("data", "model"), "{devices=[2,2]0,1,2,3}"),
        (("model", "data"), "{devices=[2,2]0,2,1,3}"),
    ],
)
def test_gspmd_text(spec: tuple, text: str) -> None:
    assert Layout((2, 2), ("data", "model"), spec).gspmd() == text


def test_layout_json_round_trip_and_bad_data() -> None:
    layout = Layout((2, 2), ("data", "model"), ("model", None))
    assert Layout.from_json(layout.to_json()) == layout
    with pytest.raises(ValueError, match="axes do not match"):
        Layout.from_json({"mesh_shape": [2], "axis_names": ["data"], "spec": ["model"]})
