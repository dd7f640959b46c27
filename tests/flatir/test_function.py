"""FlatIR on its own: build by hand, inline subgraphs, lower to verified StableHLO, map verifier errors."""

import numpy as np
import pytest

from tripy_flatir import FlatIRFunction, FlatIRTensor, TripyException, device, float32, int32
from tripy_flatir.ops.add import AddOp
from tripy_flatir.ops.broadcast import BroadcastOp
from tripy_flatir.ops.concatenate import ConcatenateOp
from tripy_flatir.ops.constant import ConstantOp
from tripy_flatir.ops.get_dimension_size import GetDimensionSizeOp
from tripy_flatir.ops.reshape import ReshapeOp
from tripy_flatir.ops.tanh import TanhOp

CPU = device("cpu")


def test_build_binds_producer_and_prints():
    x = FlatIRTensor("x", (2, 3), float32, CPU)
    y = FlatIRTensor("y", (2, 3), float32, CPU)
    op = TanhOp.build([x], [y])
    assert y.producer is op
    assert str(op) == "y: [rank=(2), shape=([2, 3]), dtype=(float32), loc=(cpu:0)] = TanhOp(x)"


def test_hand_built_function_lowers_to_stablehlo():
    fn = FlatIRFunction()
    x = fn.add_input(FlatIRTensor("x", (2, 3), float32, CPU))
    c = FlatIRTensor("c", (), float32, CPU)
    ConstantOp.build([], [c], data=np.float32(1.5))
    cb = FlatIRTensor("cb", (2, 3), float32, CPU)
    BroadcastOp.build([c], [cb], broadcast_dim=[])
    s = FlatIRTensor("s", (2, 3), float32, CPU)
    AddOp.build([x, cb], [s])
    fn.integrate_subgraph([], [s], [], [s])
    fn.outputs = [s]
    text = str(fn.to_mlir())
    assert "stablehlo.add" in text and "tensor<2x3xf32>" in text
    assert "func.func public @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32>" in text


def test_integrate_subgraph_remaps_io():
    fn = FlatIRFunction()
    real_in = fn.add_input(FlatIRTensor("a", (4,), float32, CPU))
    real_out = FlatIRTensor("b", (2, 2), float32, CPU)
    sub_in, sub_out = real_in.like(), real_out.like()
    mid = FlatIRTensor.build((4,), float32, CPU)
    TanhOp.build([sub_in], [mid])
    ReshapeOp.build([mid], [sub_out])
    ops = fn.integrate_subgraph([real_in], [real_out], [sub_in], [sub_out])
    assert [type(o).__name__ for o in ops] == ["TanhOp", "ReshapeOp"]
    assert ops[0].inputs[0] is real_in and ops[1].outputs[0] is real_out and real_out.producer is ops[1]
    fn.outputs = [real_out]
    assert "stablehlo.reshape" in str(fn.to_mlir())


def _size_and_shape(fn, x, out, value):
    """Inline a subgraph computing [dim 0 of x, value] (the shape vector a dynamic op's lowering builds) into
    `out`, through a 1-element size and a constant; the inlined ops."""
    sub_x, sub_out = x.like(), out.like()
    size = FlatIRTensor.build((), int32, CPU)
    GetDimensionSizeOp.build([sub_x], [size], dim=0)
    size1 = FlatIRTensor.build((1,), int32, CPU)
    ReshapeOp.build([size], [size1])
    const = FlatIRTensor.build((1,), int32, CPU)
    ConstantOp.build([], [const], data=np.array([value], np.int32))
    ConcatenateOp.build([size1, const], [sub_out], dim=0)
    return fn.integrate_subgraph([x], [out], [sub_x], [sub_out])


def test_small_results_are_computed_once_per_function():
    # Lowering a dynamic program builds the same sizes and constants for every op that needs them: a function
    # keeps one op per small result (kind, attributes, operands), and later ops read it.
    fn = FlatIRFunction()
    x = fn.add_input(FlatIRTensor("x", (-1, 3), int32, CPU))
    first, second, other = (FlatIRTensor(n, (2,), int32, CPU) for n in ("first", "second", "other"))
    assert sorted(type(o).__name__ for o in _size_and_shape(fn, x, first, 3)) == [
        "ConcatenateOp",
        "ConstantOp",
        "GetDimensionSizeOp",
        "ReshapeOp",
    ]
    again = _size_and_shape(fn, x, second, 3)
    assert [type(o).__name__ for o in again] == ["ConcatenateOp"]  # (its own result: the subgraph's output)
    assert again[0].inputs == first.producer.inputs
    ops = _size_and_shape(fn, x, other, 4)  # another constant: its own op
    assert sorted(type(o).__name__ for o in ops) == ["ConcatenateOp", "ConstantOp"]
    fn.outputs = [first, second, other]
    text = str(fn.to_mlir())
    assert text.count("stablehlo.get_dimension_size") == 1 and text.count("stablehlo.constant") == 2


def test_unbound_output_is_reported():
    fn = FlatIRFunction()
    out = FlatIRTensor("o", (1,), float32, CPU)
    with pytest.raises(TripyException, match="did not produce output 'o'"):
        fn.integrate_subgraph([], [out], [], [out.like()])


def test_verifier_error_maps_to_flat_ir_expression():
    fn = FlatIRFunction()
    x = fn.add_input(FlatIRTensor("x", (2, 3), float32, CPU))
    y = fn.add_input(FlatIRTensor("y", (3, 2), float32, CPU))
    bad = FlatIRTensor("bad_sum", (2, 3), float32, CPU)
    bad.reason = "to test error mapping"
    AddOp.build([x, y], [bad])
    fn.integrate_subgraph([x, y], [bad], [x, y], [bad])
    fn.outputs = [bad]
    with pytest.raises(TripyException) as info:
        fn.to_mlir()
    text = str(info.value)
    assert "bad_sum" in text and "AddOp(x, y)" in text and "to test error mapping" in text


def test_dynamic_dims_lower_to_question_marks():
    fn = FlatIRFunction()
    x = fn.add_input(FlatIRTensor("x", (-1, 3), int32, CPU))
    y = FlatIRTensor("y", (-1, 3), int32, CPU)
    AddOp.build([x, x], [y])
    fn.integrate_subgraph([x], [y], [x], [y])
    fn.outputs = [y]
    assert "tensor<?x3xi32>" in str(fn.to_mlir())


def test_ops_that_differ_only_in_an_attribute_the_text_form_hides_stay_apart():
    # (sharing reads every attribute, not only the ones str() shows)
    class QuietConstantOp(ConstantOp):
        str_skip_fields = ("data",)

    fn = FlatIRFunction()
    one, two = FlatIRTensor("one", (1,), int32, CPU), FlatIRTensor("two", (1,), int32, CPU)
    for out, value in ((one, 1), (two, 2)):
        sub = out.like()
        inner = FlatIRTensor.build((1,), int32, CPU)
        QuietConstantOp.build([], [inner], data=np.array([value], np.int32))
        ReshapeOp.build([inner], [sub])
        fn.integrate_subgraph([], [out], [], [sub])
    assert [op.inputs[0].producer.data.tolist() for op in (one.producer, two.producer)] == [[1], [2]]
