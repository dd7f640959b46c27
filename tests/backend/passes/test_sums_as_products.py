"""The ``sums-as-products`` pass: a float32 sum over dims that kept dims separate, of values stored anyway, becomes a
product with ones and a small sum (XLA:CPU's windowed sums of such dims are slow)."""

import numpy as np
import pytest

from tripy_backend import _xla, disk_cache, pipeline
from tripy_backend.passes import Job, sums_as_products


def _sum(shape, dims, summand="%arg0", before=""):
    """A module summing its argument (or `summand`, made by the ops in `before`) over `dims`."""
    t = "x".join(map(str, shape)) + "xf32"
    out = "x".join(str(n) for d, n in enumerate(shape) if d not in dims) + "xf32"
    return f"""func.func @main(%arg0: tensor<{t}>) -> tensor<{out}> {{
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>{before}
  %0 = stablehlo.reduce({summand} init: %cst) applies stablehlo.add across dimensions = {dims} : (tensor<{t}>, tensor<f32>) -> tensor<{out}>
  return %0 : tensor<{out}>
}}"""


# A GroupNorm's sum, channels-last: [N, H, W, groups, channels per group] over H, W and the channels
GROUPNORM = _sum((1, 64, 64, 8, 4), [1, 2, 4])
AS_PRODUCT = """func.func @main(%arg0: tensor<1x64x64x8x4xf32>) -> tensor<1x8xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x4096xf32>
  %1 = stablehlo.reshape %arg0 : (tensor<1x64x64x8x4xf32>) -> tensor<4096x32xf32>
  %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<1x4096xf32>, tensor<4096x32xf32>) -> tensor<1x32xf32>
  %3 = stablehlo.reshape %2 : (tensor<1x32xf32>) -> tensor<1x8x4xf32>
  %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<1x8x4xf32>, tensor<f32>) -> tensor<1x8xf32>
  return %4 : tensor<1x8xf32>
}"""

BATCH = _sum((2, 64, 64, 8, 4), [1, 2, 4])
AS_PRODUCTS = """func.func @main(%arg0: tensor<2x64x64x8x4xf32>) -> tensor<2x8xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x1x4096xf32>
  %1 = stablehlo.reshape %arg0 : (tensor<2x64x64x8x4xf32>) -> tensor<2x4096x32xf32>
  %2 = stablehlo.dot_general %0, %1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x1x4096xf32>, tensor<2x4096x32xf32>) -> tensor<2x1x32xf32>
  %3 = stablehlo.reshape %2 : (tensor<2x1x32xf32>) -> tensor<2x8x4xf32>
  %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<2x8x4xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %4 : tensor<2x8xf32>
}"""

ENDS = _sum((40, 3, 64), [0, 2])  # the longest run ends the shape: rows times a vector of ones
ROWS_TIMES_ONES = """func.func @main(%arg0: tensor<40x3x64xf32>) -> tensor<3xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reshape %arg0 : (tensor<40x3x64xf32>) -> tensor<120x64xf32>
  %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<64x1xf32>
  %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<120x64xf32>, tensor<64x1xf32>) -> tensor<120x1xf32>
  %3 = stablehlo.reshape %2 : (tensor<120x1xf32>) -> tensor<40x3xf32>
  %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<40x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %4 : tensor<3xf32>
}"""

SQUARES = "\n  %sq = stablehlo.multiply %arg0, %arg0 : tensor<1x64x64x8x4xf32>"
# A GroupNorm's variance: the squared deviations from the mean of each group, a broadcast value (XLA stores them)
DEVIATIONS = """
  %m = stablehlo.slice %arg0 [0:1, 0:1, 0:1, 0:8, 0:1] : (tensor<1x64x64x8x4xf32>) -> tensor<1x1x1x8x1xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2, 3, 4] : (tensor<1x1x1x8x1xf32>) -> tensor<1x64x64x8x4xf32>
  %d = stablehlo.subtract %arg0, %mb : tensor<1x64x64x8x4xf32>
  %sq = stablehlo.multiply %d, %d : tensor<1x64x64x8x4xf32>"""
# The same, minus a constant instead: XLA may compute those values inside the sum
CONSTANT = """
  %half = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %mb = stablehlo.broadcast_in_dim %half, dims = [] : (tensor<f32>) -> tensor<1x64x64x8x4xf32>
  %d = stablehlo.subtract %arg0, %mb : tensor<1x64x64x8x4xf32>
  %sq = stablehlo.multiply %d, %d : tensor<1x64x64x8x4xf32>"""
LEFT_ALONE = {
    "values XLA computes inside the sum": _sum((1, 64, 64, 8, 4), [1, 2, 4], "%sq", SQUARES),
    "values computed from a constant": _sum((1, 64, 64, 8, 4), [1, 2, 4], "%sq", CONSTANT),
    "one run of dims": _sum((4, 64, 64), [1, 2]),
    "no dim longer than 32": _sum((1, 32, 32, 8, 4), [1, 2, 4]),
    "too many products side by side": _sum((65, 64, 8, 4), [1, 3]),
    "a maximum": _sum((1, 64, 64, 8, 4), [1, 2, 4]).replace("stablehlo.add", "stablehlo.maximum"),
    "integers": _sum((1, 64, 64, 8, 4), [1, 2, 4]).replace("f32", "i32").replace("0.000000e+00", "0"),
}


@pytest.mark.parametrize(
    "module, expected",
    [(GROUPNORM, AS_PRODUCT), (BATCH, AS_PRODUCTS), (ENDS, ROWS_TIMES_ONES)],
    ids=["one", "batch", "rows"],
)
def test_sums_become_products(same_module, module, expected):
    same_module(sums_as_products.rewrite(module.encode(), Job()), expected)


@pytest.mark.parametrize("name", list(LEFT_ALONE))
def test_left_alone(name):
    module = LEFT_ALONE[name].encode()
    assert sums_as_products.rewrite(module, Job()) == module


def test_a_value_read_twice_is_stored():  # the squares, read by the sum and returned too
    module = (
        _sum((1, 64, 64, 8, 4), [1, 2, 4], "%sq", SQUARES)
        .replace("-> tensor<1x8xf32> {", "-> (tensor<1x8xf32>, tensor<1x64x64x8x4xf32>) {")
        .replace("return %0 : tensor<1x8xf32>", "return %0, %sq : tensor<1x8xf32>, tensor<1x64x64x8x4xf32>")
    )
    assert b"dot_general" in sums_as_products.rewrite(module.encode(), Job())


def test_values_computed_from_a_broadcast_are_stored():
    module = _sum((1, 64, 64, 8, 4), [1, 2, 4], "%sq", DEVIATIONS)
    assert b"dot_general" in sums_as_products.rewrite(module.encode(), Job())


def test_only_for_xla_cpu():
    assert sums_as_products.PASS.applies(Job(platform="cpu"))
    assert not sums_as_products.PASS.applies(Job(platform="cuda"))


def _deviations(x):  # the squared deviations from the first element of each group, as DEVIATIONS computes them
    return (x - x[:, :1, :1, :, :1]) ** 2


@pytest.mark.parametrize(
    "module, shape, dims, values",
    [
        (GROUPNORM, (1, 64, 64, 8, 4), (1, 2, 4), None),
        (BATCH, (2, 64, 64, 8, 4), (1, 2, 4), None),
        (ENDS, (40, 3, 64), (0, 2), None),
        (_sum((1, 64, 64, 8, 4), [1, 2, 4], "%sq", DEVIATIONS), (1, 64, 64, 8, 4), (1, 2, 4), _deviations),
    ],
    ids=["one", "batch", "rows", "deviations"],
)
def test_same_numbers(logged, module, shape, dims, values):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32) + 1
    (prepared, options), log = logged(lambda: pipeline.for_xla(module.encode(), "cpu", 3))
    assert "sums-as-products: 1 sum(s) as products with ones" in log
    exe, _ = disk_cache.compile(prepared, options, "cpu", 0)
    out = _xla.execute(exe, [_xla.to_device(x, "cpu", 0)])
    summed = x.astype(np.float64) if values is None else values(x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(out[0]), summed.sum(axis=dims), rtol=1e-5)
