"""Sizes as expressions (tripy_trace.symbolic): the arithmetic's canonical form and the symbols of inputs'
dynamic dims (what the frontend makes of them: tests/frontend/test_symbolic_sizes.py)."""

from __future__ import annotations

import pytest

from tripy_flatir import dtypes
from tripy_flatir.device import CPU
from tripy_flatir.tensor import DYNAMIC
from tripy_trace import symbolic
from tripy_flatir.ops.tanh import TanhOp
from tripy_trace.ops.binary_elementwise import BinaryElementwise, Kind as BinaryKind
from tripy_trace.ops.gather import Gather
from tripy_trace.ops.placeholder import Placeholder
from tripy_trace.ops.slice import Slice
from tripy_trace.ops.unary_elementwise import UnaryElementwise
from tripy_trace.trace import Trace


def test_exact_division_by_a_product_cancels():
    b, s = symbolic.symbol(), symbolic.symbol()
    volume = symbolic.mul(symbolic.mul(b, s), 72)
    assert symbolic.floordiv(volume, symbolic.mul(symbolic.mul(s, b), 8)) == 9
    assert symbolic.truncdiv(volume, symbolic.mul(b, 72)) == s
    assert symbolic.mod(volume, symbolic.mul(b, 8)) == 0


def test_sums_and_products_have_one_form():
    a, b = symbolic.symbol(), symbolic.symbol()
    assert symbolic.sub(symbolic.add(a, b), symbolic.add(b, a)) == 0
    assert symbolic.mul(symbolic.add(a, 1), 2) == symbolic.add(symbolic.mul(2, a), 2)
    assert symbolic.maximum(a, a) == a and symbolic.minimum(3, 5) == 3


@pytest.mark.parametrize(
    "make",
    [
        lambda a, b: symbolic.floordiv(symbolic.add(a, 1), 2),  # (not exact: a stays a quotient)
        lambda a, b: symbolic.floordiv(symbolic.mul(a, b), symbolic.add(a, b)),  # (not one term)
        lambda a, b: symbolic.maximum(a, b),
        lambda a, b: symbolic.mod(a, b),
        lambda a, b: symbolic.floordiv(a, 0),  # (division by zero: the run time's to report)
    ],
)
def test_what_does_not_simplify_stays_an_expression(make):
    a, b = symbolic.symbol(), symbolic.symbol()
    result = make(a, b)
    assert isinstance(result, symbolic.Expr) and result.constant is None
    assert make(a, b) == result  # (equal expressions compare equal)


def test_a_broadcast_of_different_sizes_is_a_new_size():
    a, b = symbolic.symbol(), symbolic.symbol()
    assert symbolic.broadcast([(a, 1), (1, 4)]) == [a, 4]
    assert symbolic.broadcast([(a,), (a,)]) == [a]
    (new,) = symbolic.broadcast([(a,), (b,)])  # (either may be 1 at run time)
    assert new not in (a, b)


def _input(shape, dtype=dtypes.float32):
    return Placeholder.build([], None, shape=shape, dtype=dtype, device=CPU).outputs[0]


def test_every_dynamic_dim_of_an_input_is_a_size_of_its_own():
    x = _input((DYNAMIC, 4, DYNAMIC))
    d0, d1, d2 = symbolic.dims(x)
    assert d1 == 4 and isinstance(d0, symbolic.Expr) and d0 != d2
    assert symbolic.dims(x) == (d0, d1, d2)  # (the same expressions each time)


def _lowered_ops(a, b):
    total = BinaryElementwise.build([a, b], None, kind=BinaryKind.SUM).outputs[0]
    return [type(op).__name__ for op in Trace([total], [a, b] if a is not b else [a]).to_flat_ir().ops]


def test_operands_of_sizes_the_trace_knows_equal_are_not_broadcast():
    x = _input((DYNAMIC, 4))
    same = UnaryElementwise.build([x], None, flat_op=TanhOp, spelling="tanh").outputs[0]
    assert "DynamicBroadcastOp" not in _lowered_ops(x, same)  # (tanh(x) has x's dims: one size, no broadcast)


def test_operands_of_sizes_the_trace_cannot_equate_are_broadcast_to_the_run_time_shape():
    x, y = _input((DYNAMIC, 4)), _input((DYNAMIC, 4))
    ops = _lowered_ops(x, y)  # (either may be 1 at run time: the sum is [max, 4])
    assert ops.count("DynamicBroadcastOp") == 2 and "SelectOp" in ops


def test_a_lookup_has_its_index_sizes_and_a_slice_keeps_the_dims_it_takes_whole():
    table, index = _input((DYNAMIC, 4)), _input((2, DYNAMIC), dtypes.int32)
    rows, tokens = symbolic.dims(table)[0], symbolic.dims(index)[1]
    looked_up = Gather.build([table, index], None, dim=0).outputs[0]  # [2, tokens, 4]
    assert symbolic.dims(looked_up) == (2, tokens, 4)
    whole = ((None, None, 1), (None, None, 1), (1, 3, 1))
    sliced = Slice.build([looked_up], None, index=whole, squeeze=(), new_axes=(0,)).outputs[0]
    assert symbolic.dims(sliced) == (1, 2, tokens, 2)
    part = ((1, None, 1), (None, None, 1))  # (from row 1 on: rows - 1, or 0 for an empty table)
    (rest, four) = symbolic.dims(Slice.build([table], None, index=part, squeeze=(), new_axes=()).outputs[0])
    assert four == 4 and isinstance(rest, symbolic.Expr) and rest != rows
