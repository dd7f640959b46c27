"""The passes that make a bounded program (``bounded-markers``, ``static-shapes``, ``lower-markers``; ``cse`` has a file
of its own), each on its own, and the bounded program they make together, run on padded inputs."""

import numpy as np
import pytest
from jax.extend.mlir import ir

from tripy_flatir.mlir_utils import context
from tripy_backend import _xla, pipeline
from tripy_backend.passes import Job, bounded_markers, lower_markers, static_shapes
from tripy_backend.passes.markers import SmallSize, Unsupported
from tripy_backend.range_check import Rejected

# concatenate(exp(x), broadcast(exp(x), shape_of(x))): a dim read, a shape built from it, a dynamic op, an op that
# reads across the padding.
DYNAMIC = """func.func @main(%x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %0 = stablehlo.exponential %x : tensor<?x4xf32>
  %1 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %c = stablehlo.constant dense<4> : tensor<1xi32>
  %3 = stablehlo.concatenate %2, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %4 = stablehlo.dynamic_broadcast_in_dim %0, %3, dims = [0, 1] : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<?x4xf32>
  %5 = stablehlo.concatenate %0, %4, dim = 1 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  return %5 : tensor<?x8xf32>
}"""

# bounded-markers: the dim read becomes a marker (%0), the shape arithmetic gets a twin on it (%5, %7), the
# results that reach the concatenation or the return are marked to get their real sizes, and the real size of the
# output's dim 0 is returned as one more output.
MARKED = """func.func @main(%arg0: tensor<?x4xf32>) -> (tensor<?x8xf32>, tensor<1xi32>) {
  %0 = stablehlo.custom_call @tripy.dim_size(%arg0) {backend_config = "0"} : (tensor<?x4xf32>) -> tensor<i32>
  %1 = stablehlo.exponential %arg0 : tensor<?x4xf32>
  %2:2 = stablehlo.optimization_barrier {tripy.sizes = array<i64: 0>} %1, %0 : tensor<?x4xf32>, tensor<i32>
  %3 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %4 = stablehlo.reshape %3 : (tensor<i32>) -> tensor<1xi32>
  %5 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %c = stablehlo.constant dense<4> : tensor<1xi32>
  %6 = stablehlo.concatenate %4, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %7 = stablehlo.concatenate %5, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %8 = stablehlo.dynamic_broadcast_in_dim %2#0, %6, dims = [0, 1] : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<?x4xf32>
  %9:2 = stablehlo.optimization_barrier {tripy.set_dims = array<i64: 0>} %8, %7 : tensor<?x4xf32>, tensor<2xi32>
  %10 = stablehlo.concatenate %2#0, %9#0, dim = 1 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  %11:2 = stablehlo.optimization_barrier {tripy.sizes = array<i64: 0>} %10, %0 : tensor<?x8xf32>, tensor<i32>
  %12 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  return %11#0, %12 : tensor<?x8xf32>, tensor<1xi32>
}"""

# The same after static-shapes at the bucket's bound of 8 rows (lower-markers' input).
STATIC = """func.func @main(%arg0: tensor<8x4xf32>) -> (tensor<8x8xf32>, tensor<1xi32>) {
  %c = stablehlo.constant dense<4> : tensor<1xi32>
  %0 = stablehlo.custom_call @tripy.dim_size(%arg0) {backend_config = "0"} : (tensor<8x4xf32>) -> tensor<i32>
  %1 = stablehlo.exponential %arg0 : tensor<8x4xf32>
  %2:2 = stablehlo.optimization_barrier {tripy.sizes = array<i64: 0>} %1, %0 : tensor<8x4xf32>, tensor<i32>
  %3 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %4 = stablehlo.concatenate %3, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %5 = stablehlo.broadcast_in_dim %2#0, dims = [0, 1] : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %6:2 = stablehlo.optimization_barrier {tripy.set_dims = array<i64: 0>} %5, %4 : tensor<8x4xf32>, tensor<2xi32>
  %7 = stablehlo.concatenate %2#0, %6#0, dim = 1 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %8:2 = stablehlo.optimization_barrier {tripy.sizes = array<i64: 0>} %7, %0 : tensor<8x8xf32>, tensor<i32>
  return %8#0, %3 : tensor<8x8xf32>, tensor<1xi32>
}"""

# lower-markers: the real size is an argument (%arg1), set on the input first, then on each marked result (the
# broadcast's size read straight from the scalar its shape was made of: no slice of the shape vector).
LOWERED = """func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<i32>) -> (tensor<8x8xf32>, tensor<1xi32>) {
  %0 = stablehlo.set_dimension_size %arg0, %arg1, dim = 0 : (tensor<8x4xf32>, tensor<i32>) -> tensor<?x4xf32, #stablehlo.bounds<8, ?>>
  %1 = stablehlo.convert %0 : (tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<8x4xf32>
  %c = stablehlo.constant dense<4> : tensor<1xi32>
  %2 = stablehlo.exponential %1 : tensor<8x4xf32>
  %3 = stablehlo.set_dimension_size %2, %arg1, dim = 0 : (tensor<8x4xf32>, tensor<i32>) -> tensor<?x4xf32, #stablehlo.bounds<8, ?>>
  %4 = stablehlo.convert %3 : (tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<8x4xf32>
  %5 = stablehlo.reshape %arg1 : (tensor<i32>) -> tensor<1xi32>
  %6 = stablehlo.concatenate %5, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %7 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %8 = stablehlo.set_dimension_size %7, %arg1, dim = 0 : (tensor<8x4xf32>, tensor<i32>) -> tensor<?x4xf32, #stablehlo.bounds<8, ?>>
  %9 = stablehlo.convert %8 : (tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<8x4xf32>
  %10 = stablehlo.concatenate %4, %9, dim = 1 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %11 = stablehlo.set_dimension_size %10, %arg1, dim = 0 : (tensor<8x8xf32>, tensor<i32>) -> tensor<?x8xf32, #stablehlo.bounds<8, ?>>
  %12 = stablehlo.convert %11 : (tensor<?x8xf32, #stablehlo.bounds<8, ?>>) -> tensor<8x8xf32>
  return %12, %5 : tensor<8x8xf32>, tensor<1xi32>
}"""


def bucket() -> Job:
    return Job("test", shapes=[(8, 4)], dynamic_dims=[(0, 0)])


def test_bounded_markers(same_module):
    job = bucket()
    same_module(bounded_markers.run(DYNAMIC.encode(), job), MARKED)
    assert job.out_dims == [[0]]  # the output's dim 0 is padded; its real size is the last output


def test_static_shapes_types_every_value_static(printed):
    text = printed(static_shapes.run(MARKED.encode(), bucket()))
    assert "?" not in text.split("tripy.dim_size")[1], text  # (only the markers' own types were dynamic)
    assert "tensor<8x4xf32>" in text and "stablehlo.dynamic_broadcast_in_dim" not in text


def test_lower_markers(same_module):
    same_module(lower_markers.run(STATIC.encode(), bucket()), LOWERED)


@pytest.mark.parametrize("rows", [1, 5, 8])
def test_bounded_program_runs_every_size_up_to_its_bound(rows):
    program, out_dims, _ = pipeline.bound(DYNAMIC.encode(), [(8, 4)], [(0, 0)])
    assert out_dims == [[0]]
    exe = _xla.compile(program, "cpu", 0)
    x = np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)
    padded = np.zeros((8, 4), np.float32)
    padded[:rows] = x
    result, sizes = _xla.execute(exe, [_xla.to_device(padded, "cpu", 0), _xla.to_device(np.int32(rows), "cpu", 0)])
    assert np.asarray(sizes).tolist() == [rows]
    expected = np.concatenate([np.exp(x), np.exp(x)], axis=1)
    np.testing.assert_allclose(np.asarray(result).reshape(-1)[: rows * 8].reshape(rows, 8), expected, rtol=1e-6)


# An elementwise chain (with a scalar broadcast to the input's shape), then an op that reads across the rows'
# padding (a concatenation) and the return.
CHAIN = """func.func @main(%x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %0 = stablehlo.exponential %x : tensor<?x4xf32>
  %1 = stablehlo.tanh %0 : tensor<?x4xf32>
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %r = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %c = stablehlo.constant dense<4> : tensor<1xi32>
  %s = stablehlo.concatenate %r, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %h = stablehlo.constant dense<0.5> : tensor<f32>
  %b = stablehlo.dynamic_broadcast_in_dim %h, %s, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
  %2 = stablehlo.multiply %1, %b : tensor<?x4xf32>
  %3 = stablehlo.add %2, %x : tensor<?x4xf32>
  %4 = stablehlo.concatenate %3, %x, dim = 1 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  return %4 : tensor<?x8xf32>
}"""


def test_only_values_that_reach_other_ops_than_elementwise_ones_get_their_sizes_set():
    """XLA's dynamic padder takes an elementwise result's real sizes from its operands; sizes are set only where
    a value reaches another kind of op (see ``bounded_markers._mark_sizes``)."""
    with context():
        marked = ir.Module.parse(bounded_markers.run(CHAIN.encode(), bucket()))
        fn = marked.body.operations[0]
        set_on = [
            (str(op.operands[0].owner.name), "tripy.sizes" in op.attributes)
            for op in fn.regions[0].blocks[0].operations
            if op.operation.name == "stablehlo.optimization_barrier"
        ]
    # (exp, tanh, the broadcast and the product feed elementwise ops only)
    assert set_on == [("stablehlo.add", True), ("stablehlo.concatenate", True)]


@pytest.mark.parametrize("rows", [1, 5, 8])
def test_an_elementwise_chain_without_set_sizes_runs_every_size(rows):
    program, out_dims, _ = pipeline.bound(CHAIN.encode(), [(8, 4)], [(0, 0)])
    exe = _xla.compile(program, "cpu", 0)
    x = np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)
    padded = np.full((8, 4), np.nan, np.float32)  # (padding that would show in any real element it reached)
    padded[:rows] = x
    result, sizes = _xla.execute(exe, [_xla.to_device(padded, "cpu", 0), _xla.to_device(np.int32(rows), "cpu", 0)])
    assert np.asarray(sizes).tolist() == [rows]
    expected = np.concatenate([np.tanh(np.exp(x)) * 0.5 + x, x], axis=1)
    np.testing.assert_allclose(
        np.asarray(result).reshape(-1)[: rows * 8].reshape(rows, 8), expected, rtol=1e-5, atol=1e-6
    )


def test_static_shapes_rejects_shapes_the_program_cannot_take():
    add = """func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
      %0 = stablehlo.add %a, %b : tensor<?xf32>
      return %0 : tensor<?xf32>
    }"""
    with pytest.raises(Rejected) as info:
        pipeline.specialize(add.encode(), [(2,), (4,)])
    assert not info.value.refining and info.value.messages  # (the verifier's: operands of different shapes)


def test_an_empty_input_beside_padded_ones_has_no_bounded_program():
    with pytest.raises(SmallSize):
        pipeline.bound(DYNAMIC.encode(), [(0, 4)], [(0, 0)])


def test_an_op_without_bounded_form_is_unsupported():
    sort = """func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
      %0 = "stablehlo.while"(%x) ({
      ^bb0(%a: tensor<?xf32>):
        %t = stablehlo.constant dense<false> : tensor<i1>
        stablehlo.return %t : tensor<i1>
      }, {
      ^bb0(%a: tensor<?xf32>):
        stablehlo.return %a : tensor<?xf32>
      }) : (tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }"""
    with pytest.raises(Unsupported, match="stablehlo.while"):
        pipeline.bound(sort.encode(), [(8,)], [(0, 0)])
