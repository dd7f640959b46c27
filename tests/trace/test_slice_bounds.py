"""Slice-bound normalization (the formula shared by shape inference and the lowering of t[...]) against
Python's own slice semantics, and the Slice trace op's shape inference."""

import itertools

import pytest

from tripy_flatir import dtypes
from tripy_flatir.device import CPU
from tripy_flatir.exceptions import TripyException
from tripy_flatir.tensor import DYNAMIC
from tripy_trace.ops.placeholder import Placeholder
from tripy_trace.ops.slice import DynamicBound, Slice, normalize_slice
from tripy_trace.shape_arith import INT_ARITH

BOUNDS = [None] + list(range(-9, 10))
STEPS = [1, 2, 3, 7, -1, -2, -3, -7]
SIZES = [0, 1, 2, 5, 8]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("step", STEPS)
def test_matches_python_slice_indices(size, step):
    for start, stop in itertools.product(BOUNDS, BOUNDS):
        py_start, py_stop, _ = slice(start, stop, step).indices(size)
        expected_len = len(range(size)[start:stop:step])
        got = normalize_slice(start, stop, step, size)
        assert got == (py_start, py_stop, expected_len), (start, stop, step, size)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("step", STEPS)
def test_first_element_is_start_and_bounds_stay_in_range(size, step):
    """The lowering slices from `start` for `length` elements (mirrored for negative steps), so even
    for empty slices start must stay within [0, size] (step > 0) or [-1, size - 1] (step < 0)."""
    lo, hi = (0, size) if step > 0 else (-1, size - 1)
    for start, stop in itertools.product(BOUNDS, BOUNDS):
        first, _, length = normalize_slice(start, stop, step, size)
        assert lo <= first <= hi
        selected = list(range(size))[start:stop:step]
        if length:
            assert selected[0] == first
            assert selected == [first + i * step for i in range(length)]


def test_huge_bounds_are_clamped():
    assert normalize_slice(-(10**9), 10**9, 1, 4) == (0, 4, 4)
    assert normalize_slice(10**9, -(10**9), -1, 4) == (3, -1, 4)
    assert normalize_slice(10**9, None, 2, 4) == (4, 4, 0)


def test_zero_step_is_rejected():
    with pytest.raises(ValueError):
        normalize_slice(None, None, 0, 3)


@pytest.mark.parametrize("a", range(-9, 10))
@pytest.mark.parametrize("b", [1, 2, 3, 5])
def test_int_floordiv_rounds_down(a, b):
    assert INT_ARITH.floordiv(a, b) == a // b


# ---- the Slice trace op -----------------------------------------------------------------------------


def _input(shape):
    return Placeholder.build([], None, shape=tuple(shape), dtype=dtypes.float32, device=CPU).outputs[0]


def _bound_input():
    return Placeholder.build([], None, shape=(), dtype=dtypes.int32, device=CPU).outputs[0]


@pytest.mark.parametrize(
    "shape,index,squeeze,new_axes,expected",
    [
        ((5, 6), ((1, 4, 1), (None, None, -2)), (), (), (3, 3)),
        ((5, 6), ((-1, None, 1), (None, None, 1)), (0,), (), (6,)),
        ((5, 6), ((2, 3, 1), (None, None, 1)), (0,), (0, 2), (1, 6, 1)),
        ((5, DYNAMIC), ((None, None, 1), (1, None, 1)), (), (), (5, DYNAMIC)),
        ((DYNAMIC, 4), ((0, 1, 1), (None, None, -1)), (0,), (), (4,)),
        ((0, 3), ((None, None, 1), (None, None, 1)), (), (), (0, 3)),
    ],
)
def test_shape_inference(shape, index, squeeze, new_axes, expected):
    op = Slice.build([_input(shape)], index=index, squeeze=squeeze, new_axes=new_axes)
    assert op.outputs[0].shape == expected


def test_run_time_bounds_make_the_dim_dynamic():
    op = Slice.build(
        [_input((5, 6)), _bound_input()], index=((None, DynamicBound(1), 1), (None, None, 1)), squeeze=(), new_axes=()
    )
    assert op.outputs[0].shape == (DYNAMIC, 6)


@pytest.mark.parametrize("i", [5, -6, 100])
def test_out_of_range_int_index_is_an_error(i):
    with pytest.raises(TripyException, match=rf"Index {i} is out of range for dim 0 of a tensor of shape \[5, 6\]"):
        Slice.build([_input((5, 6))], index=((i, i + 1, 1), (None, None, 1)), squeeze=(0,), new_axes=())
