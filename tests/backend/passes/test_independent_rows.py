"""Pass ``independent-rows``: which programs have rows that are independent along their one size variable (and so
get the static program at their bucket's bounds, with no markers), which do not (and keep ``bounded-markers``),
and the programs it makes, run on zero-padded inputs at every size up to the bound, 0 and 1 included."""

import numpy as np
import pytest

from tripy_backend import _xla, pipeline
from tripy_backend.passes import Job, independent_rows

# A product with a weight, a dim read, a shape built from it, a broadcast of the product to its own shape, a tanh.
DYNAMIC = """func.func @main(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %1 = stablehlo.get_dimension_size %0, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
  %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %c = stablehlo.constant dense<3> : tensor<1xi32>
  %3 = stablehlo.concatenate %2, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %4 = stablehlo.dynamic_broadcast_in_dim %0, %3, dims = [0, 1] : (tensor<?x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %5 = stablehlo.tanh %4 : tensor<?x3xf32>
  return %5 : tensor<?x3xf32>
}"""

# The real size is an argument, returned as the output's; the broadcast of the product to its own shape is the
# product.
ROWS = """func.func @main(%arg0: tensor<?x4xf32>, %arg1: tensor<4x3xf32>, %arg2: tensor<i32>) -> (tensor<?x3xf32>, tensor<1xi32>) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %1 = stablehlo.get_dimension_size %0, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
  %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %c = stablehlo.constant dense<3> : tensor<1xi32>
  %3 = stablehlo.concatenate %2, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %4 = stablehlo.tanh %0 : tensor<?x3xf32>
  %5 = stablehlo.reshape %arg2 : (tensor<i32>) -> tensor<1xi32>
  return %4, %5 : tensor<?x3xf32>, tensor<1xi32>
}"""


def bucket(variables=("b",)) -> Job:
    return Job("test", shapes=[(8, 4), (4, 3)], dynamic_dims=[(0, 0)], variables=list(variables))


def test_independent_rows(same_module):
    job = bucket()
    same_module(independent_rows.run(DYNAMIC.encode(), job), ROWS)
    assert job.rows and job.out_dims == [[0]]


def _program(body: str, arg: str = "tensor<?x4xf32>", result: str = "tensor<?x4xf32>") -> bytes:
    return f"""func.func @main(%x: {arg}) -> {result} {{
      %n = stablehlo.get_dimension_size %x, dim = 0 : ({arg}) -> tensor<i32>
      %r = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
      %c4 = stablehlo.constant dense<4> : tensor<1xi32>
      %s = stablehlo.concatenate %r, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      {body}
    }}""".encode()


INDEPENDENT = {
    "a sum of each row": (
        """%z = stablehlo.constant dense<0.0> : tensor<f32>
      %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>""",
        "tensor<?xf32>",
        [[0]],
    ),
    "a product with a weight": (
        """%w = stablehlo.constant dense<1.0> : tensor<4x3xf32>
      %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
      return %0 : tensor<?x3xf32>""",
        "tensor<?x3xf32>",
        [[0]],
    ),
    "a reshape that keeps the rows whole": (
        """%c2 = stablehlo.constant dense<2> : tensor<1xi32>
      %t = stablehlo.concatenate %r, %c2, %c2, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
      %0 = stablehlo.dynamic_reshape %x, %t : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<?x2x2xf32>
      return %0 : tensor<?x2x2xf32>""",
        "tensor<?x2x2xf32>",
        [[0]],
    ),
    "a weight alone (no row dim)": (
        """%w = stablehlo.constant dense<1.0> : tensor<4xf32>
      %0 = stablehlo.exponential %w : tensor<4xf32>
      return %0 : tensor<4xf32>""",
        "tensor<4xf32>",
        [[]],
    ),
}

DEPENDENT = {
    "a sum over the rows": (
        """%z = stablehlo.constant dense<0.0> : tensor<f32>
      %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>""",
        "tensor<4xf32>",
    ),
    "a size as data (x * x.shape[0])": (
        """%f = stablehlo.convert %n : (tensor<i32>) -> tensor<f32>
      %b = stablehlo.dynamic_broadcast_in_dim %f, %s, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
      %0 = stablehlo.multiply %x, %b : tensor<?x4xf32>
      return %0 : tensor<?x4xf32>""",
        "tensor<?x4xf32>",
    ),
    "a concatenation of rows": (
        """%0 = stablehlo.concatenate %x, %x, dim = 0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
      return %0 : tensor<?x4xf32>""",
        "tensor<?x4xf32>",
    ),
    "a product over the rows (x^T x)": (
        """%0 = stablehlo.dot_general %x, %x, contracting_dims = [0] x [0] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>
      return %0 : tensor<4x4xf32>""",
        "tensor<4x4xf32>",
    ),
    "a slice of the rows (x[1:])": (
        """%c0 = stablehlo.constant dense<0> : tensor<2xi32>
      %c1 = stablehlo.constant dense<1> : tensor<2xi32>
      %start = stablehlo.constant dense<[1, 0]> : tensor<2xi32>
      %0 = stablehlo.real_dynamic_slice %x, %start, %s, %c1 : (tensor<?x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x4xf32>
      return %0 : tensor<?x4xf32>""",
        "tensor<?x4xf32>",
    ),
    "a broadcast to twice the rows": (
        """%c2 = stablehlo.constant dense<2> : tensor<i32>
      %m = stablehlo.multiply %n, %c2 : tensor<i32>
      %mr = stablehlo.reshape %m : (tensor<i32>) -> tensor<1xi32>
      %t = stablehlo.concatenate %mr, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %0 = stablehlo.dynamic_broadcast_in_dim %z, %t, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
      return %0 : tensor<?x4xf32>""",
        "tensor<?x4xf32>",
    ),
    "an output whose rows are not first in its buffer": (
        """%0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<?x4xf32>) -> tensor<4x?xf32>
      return %0 : tensor<4x?xf32>""",
        "tensor<4x?xf32>",
    ),
}


@pytest.mark.parametrize("case", INDEPENDENT)
def test_programs_whose_rows_are_independent(case):
    body, result, out_dims = INDEPENDENT[case]
    job = bucket()
    independent_rows.run(_program(body, result=result), job)
    assert job.rows and job.out_dims == out_dims


@pytest.mark.parametrize("case", DEPENDENT)
def test_programs_whose_rows_depend_on_each_other_keep_their_markers(case):
    body, result = DEPENDENT[case]
    module = _program(body, result=result)
    job = bucket()
    assert independent_rows.run(module, job) == module
    assert not job.rows
    program, _, rows = pipeline.bound(module, [(8, 4)], [(0, 0)], variables=["b"])
    assert not rows and b"set_dimension_size" in program


def test_a_convolution_of_a_batch_is_independent_and_a_window_over_it_is_not():
    arg = "tensor<?x2x5x5xf32>"
    conv = """%w = stablehlo.constant dense<1.0> : tensor<3x2x3x3xf32>
      %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<?x3x5x5xf32>
      return %0 : tensor<?x3x5x5xf32>"""
    job = Job("test", shapes=[(8, 2, 5, 5)], dynamic_dims=[(0, 0)], variables=["b"])
    independent_rows.run(_program(conv, arg, "tensor<?x3x5x5xf32>"), job)
    assert job.rows and job.out_dims == [[0]]
    window = """%z = stablehlo.constant dense<0.0> : tensor<f32>
      %0 = "stablehlo.reduce_window"(%x, %z) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %m = stablehlo.maximum %a, %b : tensor<f32>
        stablehlo.return %m : tensor<f32>
      }) {window_dimensions = array<i64: 2, 1, 1, 1>} : (tensor<?x2x5x5xf32>, tensor<f32>) -> tensor<?x2x5x5xf32>
      return %0 : tensor<?x2x5x5xf32>"""
    job = Job("test", shapes=[(8, 2, 5, 5)], dynamic_dims=[(0, 0)], variables=["b"])
    independent_rows.run(_program(window, arg, "tensor<?x2x5x5xf32>"), job)
    assert not job.rows


def test_two_size_variables_keep_their_markers():
    two = """func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %0 = stablehlo.exponential %a : tensor<?x4xf32>
      return %0 : tensor<?x4xf32>
    }"""
    job = Job("test", shapes=[(8, 4), (8, 4)], dynamic_dims=[(0, 0), (1, 0)], variables=["m", "n"])
    assert not independent_rows.PASS.applies(job)
    job.variables = ["n", "n"]
    independent_rows.run(two.encode(), job)
    assert job.rows and job.out_dims == [[0]]


@pytest.mark.parametrize("rows", [0, 1, 5, 8])
def test_the_static_program_at_the_bound_runs_every_size(rows):
    program, out_dims, independent = pipeline.bound(DYNAMIC.encode(), [(8, 4), (4, 3)], [(0, 0)], variables=["b"])
    assert independent and out_dims == [[0]] and b"set_dimension_size" not in program
    exe = _xla.compile(program, "cpu", 0)
    rng = np.random.default_rng(rows)
    x, w = rng.standard_normal((rows, 4)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    padded = np.zeros((8, 4), np.float32)
    padded[:rows] = x
    args = [_xla.to_device(a, "cpu", 0) for a in (padded, w, np.int32(rows))]
    result, sizes = _xla.execute(exe, args)
    assert np.asarray(sizes).tolist() == [rows]
    np.testing.assert_allclose(np.asarray(result)[:rows], np.tanh(x @ w), rtol=1e-5, atol=1e-6)
