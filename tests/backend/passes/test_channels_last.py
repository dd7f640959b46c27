"""Channels-last convolutions (the pass tripy_backend.passes.channels_last): the transposes around a convnet's convolutions
sink through the ops between them and cancel, and the program computes the same numbers."""

import numpy as np
import pytest

from jax.extend.mlir import ir

from tripy_flatir.mlir_utils import context
from tripy_backend import _xla, cpu_plan, pipeline
from tripy_backend.passes import Job, channels_last

CONV = (
    "stablehlo.convolution({x}, {k}) dim_numbers = [b, f, 0, 1]x[0, 1, i, o]->[b, f, 0, 1], window = "
    "{{stride = [1, 1], pad = [[1, 1], [1, 1]]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} "
    ": (tensor<{xs}xf32>, tensor<3x3x4x4xf32>) -> tensor<{xs}xf32>"
)

# conv -> + per-channel bias -> relu -> 2x2 max pool -> conv -> + residual -> concat -> split channels into
# 2 groups -> sum over each group -> merge: every op between the convolutions keeps the layout free.
BLOCK = f"""func.func @main(%x: tensor<1x4x8x8xf32>, %k: tensor<3x3x4x4xf32>, %b: tensor<4xf32>) -> tensor<1x8x4x4xf32> {{
  %0 = {CONV.format(x="%x", k="%k", xs="1x4x8x8")}
  %1 = stablehlo.reshape %b : (tensor<4xf32>) -> tensor<1x4x1x1xf32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %3 = stablehlo.add %0, %2 : tensor<1x4x8x8xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %4 = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<1x4x8x8xf32>
  %5 = stablehlo.maximum %3, %4 : tensor<1x4x8x8xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %6 = "stablehlo.reduce_window"(%5, %ninf) <{{window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}}> ({{
  ^bb0(%a: tensor<f32>, %c: tensor<f32>):
    %m = stablehlo.maximum %a, %c : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }}) : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %7 = {CONV.format(x="%6", k="%k", xs="1x4x4x4")}
  %8 = stablehlo.add %7, %6 : tensor<1x4x4x4xf32>
  %9 = stablehlo.concatenate %8, %6, dim = 1 : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  %10 = stablehlo.reshape %9 : (tensor<1x8x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  %11 = stablehlo.reduce(%10 init: %zero) applies stablehlo.add across dimensions = [2, 3, 4] : (tensor<1x2x4x4x4xf32>, tensor<f32>) -> tensor<1x2xf32>
  %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<1x2xf32>) -> tensor<1x2x4x4x4xf32>
  %13 = stablehlo.subtract %10, %12 : tensor<1x2x4x4x4xf32>
  %14 = stablehlo.reshape %13 : (tensor<1x2x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %14 : tensor<1x8x4x4xf32>
}}""".encode()


def text(program: bytes) -> str:
    with context():
        return str(ir.Module.parse(program))


def run(program: bytes, *arrays: np.ndarray) -> np.ndarray:
    exe = _xla.compile(program, "cpu", 0)
    return np.asarray(_xla.execute(exe, [_xla.to_device(a, "cpu", 0) for a in arrays])[0])


def test_transposes_cancel_but_one_out():
    rewritten = channels_last.rewrite(BLOCK, Job())
    assert channels_last.count_transposes(BLOCK) == 0
    assert channels_last.count_activation_transposes(rewritten) == 1  # the result back to [N, C, H, W], at the end
    assert text(rewritten).count("->[b, 0, 1, f]") == 2  # both convolutions' results are channels-last
    assert text(rewritten).count("[b, 0, 1, f]x") == 1  # the second reads the first's layout as stored


def test_same_numbers_channels_last():
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((1, 4, 8, 8), (3, 3, 4, 4), (4,))]
    np.testing.assert_allclose(run(channels_last.rewrite(BLOCK, Job()), *args), run(BLOCK, *args), rtol=1e-5, atol=1e-5)


def test_program_without_convolutions_is_untouched():
    program = (
        b"func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
        b"  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
        b"  return %0 : tensor<3x2xf32>\n}"
    )
    assert channels_last.rewrite(program, Job()) is program


@pytest.mark.parametrize("setting, rewritten", [("1", True), ("0", False)])
def test_plan_applies_it_unless_turned_off(monkeypatch, setting, rewritten):
    monkeypatch.setenv("TRIPY_XLA_CPU_CHANNELS_LAST", setting)
    prepared, _ = pipeline.for_xla(BLOCK, "cpu", 3)
    assert (channels_last.count_transposes(prepared) == 1) is rewritten
    assert f"channels-last={setting}" in cpu_plan.fingerprint("cpu", 0)


@pytest.mark.parametrize(
    "shape_in, shape_out, groups",
    [
        ((1, 8, 4, 4), (1, 2, 4, 4, 4), [([0], [0]), ([1], [1, 2]), ([2], [3]), ([3], [4])]),
        ((2, 3, 4), (2, 12), [([0], [0]), ([1, 2], [1])]),
        ((6,), (1, 6, 1), [([0], [0, 1, 2])]),
        ((2, 3), (3, 2), [([0, 1], [0, 1])]),  # one group: moves only with both dims, in order
    ],
)
def test_reshape_groups(shape_in, shape_out, groups):
    assert channels_last._reshape_groups(shape_in, shape_out) == groups
