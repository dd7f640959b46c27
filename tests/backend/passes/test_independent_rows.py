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
    "a reshape whose size is computed (x.reshape(-1, 4))": (
        """%c2 = stablehlo.constant dense<2> : tensor<1xi32>
      %t = stablehlo.concatenate %r, %c2, %c2, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
      %y = stablehlo.dynamic_reshape %x, %t : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<?x2x2xf32>
      %m = stablehlo.get_dimension_size %y, dim = 0 : (tensor<?x2x2xf32>) -> tensor<i32>
      %four = stablehlo.constant dense<4> : tensor<i32>
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %e = stablehlo.multiply %m, %four : tensor<i32>
      %q = stablehlo.divide %e, %four : tensor<i32>
      %rem = stablehlo.remainder %e, %four : tensor<i32>
      %odd = stablehlo.compare NE, %rem, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %down = stablehlo.subtract %q, %one : tensor<i32>
      %rows = stablehlo.select %odd, %down, %q : tensor<i1>, tensor<i32>
      %rr = stablehlo.reshape %rows : (tensor<i32>) -> tensor<1xi32>
      %u = stablehlo.concatenate %rr, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %0 = stablehlo.dynamic_reshape %y, %u : (tensor<?x2x2xf32>, tensor<2xi32>) -> tensor<?x4xf32>
      return %0 : tensor<?x4xf32>""",
        "tensor<?x4xf32>",
        [[0]],
    ),
    "as many rows of a weight (w[:n])": (
        """%w = stablehlo.constant dense<1.0> : tensor<16x4xf32>
      %c0 = stablehlo.constant dense<0> : tensor<2xi32>
      %c1 = stablehlo.constant dense<1> : tensor<2xi32>
      %rows = stablehlo.real_dynamic_slice %w, %c0, %s, %c1 : (tensor<16x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x4xf32>
      %0 = stablehlo.add %x, %rows : tensor<?x4xf32>
      return %0 : tensor<?x4xf32>""",
        "tensor<?x4xf32>",
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
    "a sum over the rows that starts at 1": (
        """%z = stablehlo.constant dense<1.0> : tensor<f32>
      %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>""",
        "tensor<4xf32>",
    ),
    "an output with two row dims (x x^T)": (
        """%0 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [1] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>""",
        "tensor<?x?xf32>",
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
    "rows of a weight from the second (w[1:n+1])": (
        """%w = stablehlo.constant dense<1.0> : tensor<16x4xf32>
      %c1 = stablehlo.constant dense<1> : tensor<2xi32>
      %start = stablehlo.constant dense<[1, 0]> : tensor<2xi32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %m = stablehlo.add %n, %one : tensor<i32>
      %mr = stablehlo.reshape %m : (tensor<i32>) -> tensor<1xi32>
      %t = stablehlo.concatenate %mr, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %rows = stablehlo.real_dynamic_slice %w, %start, %t, %c1 : (tensor<16x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x4xf32>
      %0 = stablehlo.add %x, %rows : tensor<?x4xf32>
      return %0 : tensor<?x4xf32>""",
        "tensor<?x4xf32>",
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


def test_the_module_analyzed_at_a_bound_makes_every_smaller_bucket():
    found = pipeline.rows_module(DYNAMIC.encode(), [(8, 4), (4, 3)], [(0, 0)], ["b"])
    assert found is not None and found[1] == [[0]]
    for bound in (3, 8):  # (from the analyzed module the pass does not run again: the same program as from scratch)
        shapes = [(bound, 4), (4, 3)]
        again = pipeline.bound(found[0], shapes, [(0, 0)], variables=["b"], rows=found[1])
        assert again == pipeline.bound(DYNAMIC.encode(), shapes, [(0, 0)], variables=["b"])
    body, result = DEPENDENT["a sum over the rows that starts at 1"]
    module = _program(body, result=result)
    assert pipeline.rows_module(module, [(8, 4)], [(0, 0)], ["b"]) is None


# What reads across the rows (a reduction, a product over them) reads them masked beyond the real size.
MASKED_SUM = """module {
  func.func @main(%arg0: tensor<?x4xf32>, %arg1: tensor<i32>) -> tensor<4xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
    %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
    %c = stablehlo.constant dense<4> : tensor<1xi32>
    %2 = stablehlo.concatenate %1, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %3 = stablehlo.dynamic_broadcast_in_dim %arg1, %2, dims = [] : (tensor<i32>, tensor<2xi32>) -> tensor<?x4xi32>
    %4 = stablehlo.dynamic_iota %2, dim = 0 : (tensor<2xi32>) -> tensor<?x4xi32>
    %5 = stablehlo.compare LT, %4, %3 : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi1>
    %6 = stablehlo.dynamic_broadcast_in_dim %cst, %2, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
    %7 = stablehlo.select %5, %arg0, %6 : tensor<?x4xi1>, tensor<?x4xf32>
    %8 = stablehlo.reduce(%7 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>
    return %8 : tensor<4xf32>
  }
}"""


def test_a_sum_over_the_rows_reads_them_masked(same_module):
    program = """func.func @main(%x: tensor<?x4xf32>) -> tensor<4xf32> {
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    job = bucket()
    same_module(independent_rows.run(program.encode(), job), MASKED_SUM)
    assert job.rows and job.out_dims == [[]]


_SQUARE = """%rr = stablehlo.concatenate %r, %r, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %xx = stablehlo.dot_general %x, %x, contracting_dims = [1] x [1] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>"""
_SOFTMAX_TIMES_X = """%ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %m = stablehlo.reduce(%a init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<?x?xf32>, tensor<f32>) -> tensor<?xf32>
      %mb = stablehlo.dynamic_broadcast_in_dim %m, %rr, dims = [0] : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x?xf32>
      %d = stablehlo.subtract %a, %mb : tensor<?x?xf32>
      %e = stablehlo.exponential %d : tensor<?x?xf32>
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %t = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<?x?xf32>, tensor<f32>) -> tensor<?xf32>
      %tb = stablehlo.dynamic_broadcast_in_dim %t, %rr, dims = [0] : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x?xf32>
      %p = stablehlo.divide %e, %tb : tensor<?x?xf32>
      %0 = stablehlo.dot_general %p, %x, contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
      return %0 : tensor<?x4xf32>"""


def _softmax_times_x(x: np.ndarray, causal: bool, scale: float = 1.0) -> np.ndarray:
    a = scale * (x @ x.T)
    if causal:
        a = np.where(np.arange(len(x))[None, :] > np.arange(len(x))[:, None], -np.inf, a)
    e = np.exp(a - a.max(axis=1, keepdims=True, initial=-np.inf))
    return (e / e.sum(axis=1, keepdims=True)) @ x


ACROSS_ROWS = {
    "a sum over the rows": (
        """%z = stablehlo.constant dense<0.0> : tensor<f32>
      %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>""",
        "tensor<4xf32>",
        lambda x: x.sum(axis=0),
    ),
    "a maximum over the rows": (
        """%z = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %0 = stablehlo.reduce(%x init: %z) applies stablehlo.maximum across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>""",
        "tensor<4xf32>",
        lambda x: x.max(axis=0, initial=-np.inf),
    ),
    "a product over the rows (x^T x)": (
        """%0 = stablehlo.dot_general %x, %x, contracting_dims = [0] x [0] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>
      return %0 : tensor<4x4xf32>""",
        "tensor<4x4xf32>",
        lambda x: x.T @ x,
    ),
    "attention over the rows (softmax(x x^T) x)": (
        f"""{_SQUARE}
      %a = stablehlo.add %xx, %xx : tensor<?x?xf32>
      {_SOFTMAX_TIMES_X}""",
        "tensor<?x4xf32>",
        lambda x: _softmax_times_x(x, False, scale=2.0),
    ),
    "causal attention (a row reads the rows before it)": (
        f"""{_SQUARE}
      %k = stablehlo.dynamic_iota %rr, dim = 1 : (tensor<2xi32>) -> tensor<?x?xi32>
      %q = stablehlo.dynamic_iota %rr, dim = 0 : (tensor<2xi32>) -> tensor<?x?xi32>
      %future = stablehlo.compare GT, %k, %q, SIGNED : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
      %inf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %hidden = stablehlo.dynamic_broadcast_in_dim %inf, %rr, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
      %a = stablehlo.select %future, %hidden, %xx : tensor<?x?xi1>, tensor<?x?xf32>
      {_SOFTMAX_TIMES_X}""",
        "tensor<?x4xf32>",
        lambda x: _softmax_times_x(x, True),
    ),
}


@pytest.mark.parametrize("case", ACROSS_ROWS)
@pytest.mark.parametrize("rows", [0, 1, 5, 8])
def test_what_reads_across_the_rows_reads_the_real_rows_only(case, rows):
    """Padded with NaN (not the launcher's zeros): a result that read one padded element would show it."""
    body, result, reference = ACROSS_ROWS[case]
    program, out_dims, independent = pipeline.bound(_program(body, result=result), [(8, 4)], [(0, 0)], variables=["b"])
    assert independent and b"set_dimension_size" not in program
    exe = _xla.compile(program, "cpu", 0)
    x = np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32) / 2
    padded = np.full((8, 4), np.nan, np.float32)
    padded[:rows] = x
    outputs = _xla.execute(exe, [_xla.to_device(padded, "cpu", 0), _xla.to_device(np.int32(rows), "cpu", 0)])
    got = np.asarray(outputs[0])
    if out_dims == [[0]]:
        assert np.asarray(outputs[1]).tolist() == [rows]
        got = got[:rows]
    np.testing.assert_allclose(got, reference(x.astype(np.float64)), rtol=1e-5, atol=1e-5)
