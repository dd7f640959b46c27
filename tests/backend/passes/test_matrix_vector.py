"""The ``matrix-vector-isolation`` pass: a big matrix-vector product's vector operand and result pass through an
exact identity (a sum over a new axis of the value and a zero) that XLA:CPU does not fuse through."""

import numpy as np

from tripy_backend import _xla, disk_cache, pipeline
from tripy_backend.passes import Job, matrix_vector

ARGS = "%arg0: tensor<1x768xf32>, %arg1: tensor<2048x768xf32>, %arg2: tensor<1x2048xf32>"
# a row times a weight, plus a bias
PRODUCT = f"""func.func @main({ARGS}) -> tensor<1x2048xf32> {{
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [1] : (tensor<1x768xf32>, tensor<2048x768xf32>) -> tensor<1x2048xf32>
  %1 = stablehlo.add %0, %arg2 : tensor<1x2048xf32>
  return %1 : tensor<1x2048xf32>
}}"""

ISOLATED = f"""func.func @main({ARGS}) -> tensor<1x2048xf32> {{
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reshape %arg0 : (tensor<1x768xf32>) -> tensor<1x1x768xf32>
  %1 = stablehlo.pad %0, %cst, low = [0, 0, 0], high = [1, 0, 0], interior = [0, 0, 0] : (tensor<1x1x768xf32>, tensor<f32>) -> tensor<2x1x768xf32>
  %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x1x768xf32>, tensor<f32>) -> tensor<1x768xf32>
  %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %3 = stablehlo.dot_general %2, %arg1, contracting_dims = [1] x [1] : (tensor<1x768xf32>, tensor<2048x768xf32>) -> tensor<1x2048xf32>
  %4 = stablehlo.reshape %3 : (tensor<1x2048xf32>) -> tensor<1x1x2048xf32>
  %5 = stablehlo.pad %4, %cst_0, low = [0, 0, 0], high = [1, 0, 0], interior = [0, 0, 0] : (tensor<1x1x2048xf32>, tensor<f32>) -> tensor<2x1x2048xf32>
  %6 = stablehlo.reduce(%5 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<2x1x2048xf32>, tensor<f32>) -> tensor<1x2048xf32>
  %7 = stablehlo.add %6, %arg2 : tensor<1x2048xf32>
  return %7 : tensor<1x2048xf32>
}}"""

SMALL = """func.func @main(%arg0: tensor<64x768xf32>, %arg1: tensor<768x1xf32>) -> tensor<64x1xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x768xf32>, tensor<768x1xf32>) -> tensor<64x1xf32>
  return %0 : tensor<64x1xf32>
}"""


def test_isolated(same_module):
    same_module(matrix_vector.isolate(PRODUCT.encode(), Job()), ISOLATED)


def test_small_products_are_left_alone():  # below cpu_plan.ISOLATE_ELEMENTS
    assert matrix_vector.isolate(SMALL.encode(), Job()) == SMALL.encode()


def test_only_on_the_thunk_runtime():
    assert matrix_vector.PASS.applies(Job(platform="cpu", runtime="thunk"))
    assert not matrix_vector.PASS.applies(Job(platform="cpu", runtime="classic"))


def test_same_numbers_isolated():
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((1, 768), (2048, 768), (1, 2048)))
    prepared, options = pipeline.for_xla(PRODUCT.encode(), "cpu", 3)  # (auto: the thunk runtime, isolated)
    exe, _ = disk_cache.compile(prepared, options, "cpu", 0)
    out = _xla.execute(exe, [_xla.to_device(a, "cpu", 0) for a in (x, w, b)])
    np.testing.assert_allclose(np.asarray(out[0]), x @ w.T + b, rtol=1e-4, atol=1e-4)
