"""A program compiled for a range of shapes gives results of the right shape at every size of the range, also
where the compiler folds the result to a constant (``a == a`` on integers, ``a ^ a`` on bools: XLA's dynamic
padder loses the real size of a folded value, so the sizes must come from the program's shape arithmetic).

Two dynamic dims (two variables) make every bucket a bounded program: sizes between its bounds run padded."""

import re

import numpy as np
import pytest

import tripy as tp

RANGE = (2, 3, 9)
SIZES = [(5, 7), (2, 9), (3, 3), (9, 6), (7, 2), (4, 5)]  # most of them between two bounds: padded
DTYPES = [tp.float32, tp.float16, tp.bfloat16, tp.int8, tp.int32, tp.int64, tp.bool]
NUMPY = {
    tp.float32: np.float32,
    tp.float16: np.float16,
    tp.int8: np.int8,
    tp.int32: np.int32,
    tp.int64: np.int64,
    tp.bool: np.bool_,
}

# Results that do not depend on the input's values (a folding compiler makes each a constant), with NumPy's
# answer for an input `a`.
FOLDING = {
    "a == a": (lambda a: a == a, lambda a: np.ones(a.shape, bool)),
    "a >= a": (lambda a: a >= a, lambda a: np.ones(a.shape, bool)),
    "a < a": (lambda a: a < a, lambda a: np.zeros(a.shape, bool)),
    "zeros_like": (lambda a: tp.zeros_like(a), lambda a: np.zeros(a.shape, a.dtype)),
    "ones_like + transpose": (lambda a: tp.transpose(tp.ones_like(a), 0, 1), lambda a: np.ones(a.shape[::-1], a.dtype)),
    "concatenate of a == a": (
        lambda a: tp.concatenate([a == a, a == a], dim=1),
        lambda a: np.ones((a.shape[0], 2 * a.shape[1]), bool),
    ),
    # (values: the second part must start right after the first one's real size, not after its padding)
    "concatenate of a >= a and a < a": (
        lambda a: tp.concatenate([a >= a, a < a], dim=1),
        lambda a: np.concatenate([np.ones(a.shape, bool), np.zeros(a.shape, bool)], 1),
    ),
}
INTEGER_FOLDING = {
    "a - a": (lambda a: a - a, lambda a: np.zeros(a.shape, a.dtype)),
    "a * 0": (lambda a: a * 0, lambda a: np.zeros(a.shape, a.dtype)),
    "sum(a - a, dim=0)": (lambda a: tp.sum(a - a, dim=0), lambda a: np.zeros(a.shape[1:], a.dtype)),
}
BOOL_FOLDING = {
    "a ^ a": (lambda a: a ^ a, lambda a: np.zeros(a.shape, bool)),
    "a & a": (lambda a: a & a, lambda a: a),
}


def _cases():
    for dtype in DTYPES:
        table = dict(FOLDING)
        if dtype in (tp.int8, tp.int32, tp.int64):
            table.update(INTEGER_FOLDING)
        if dtype == tp.bool:
            table.update(BOOL_FOLDING)
        for name in table:
            yield pytest.param(dtype, *table[name], id=f"{dtype}-{name}")


def _input(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    if dtype == tp.bool:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype == tp.bfloat16:
        return rng.integers(-3, 4, shape).astype(np.float32)
    return rng.integers(-3, 4, shape).astype(NUMPY[dtype])


@pytest.mark.parametrize("dtype, fn, expected", list(_cases()))
def test_range_program_results_have_the_real_shape_at_every_size(dtype, fn, expected):
    exe = tp.compile(fn, args=[tp.InputInfo((RANGE, RANGE), dtype)])
    for shape in SIZES:
        data = _input(shape, dtype)
        x = tp.Tensor(data) if dtype != tp.bfloat16 else tp.cast(tp.Tensor(data), tp.bfloat16)
        got = exe(x)
        want = expected(data)
        assert tuple(got.shape) == want.shape, (shape, tuple(got.shape))
        out = np.from_dlpack(tp.cast(got, tp.float32) if got.dtype == tp.bfloat16 else got)
        assert out.shape == want.shape, shape
        assert np.array_equal(out, want.astype(out.dtype)), shape


def test_eager_agrees_with_the_range_program_on_a_folded_result():
    """The same function evaluated eagerly (one static program per shape) and through the range program."""
    exe = tp.compile(lambda a: a >= a, args=[tp.InputInfo(((2, 7, 9),), tp.bool)])
    for n in (7, 5, 3, 9, 2):
        a = tp.Tensor(np.ones(n, bool))
        assert np.from_dlpack(exe(a)).shape == np.from_dlpack(a >= a).shape == (n,)


def test_shape_arithmetic_dividing_by_a_size_that_can_be_zero_is_an_error_not_a_crash():
    # At the bucket where t.shape[1] % 3 == 0, StableHLO's shape refinement folded an integer division by
    # zero in C++ and the process died of SIGFPE inside tp.compile.
    def f(t):
        return tp.reshape(t, (t.shape[0], t.shape[1] % 3, -1))

    with pytest.raises(
        tp.TripyException,
        match=re.escape(
            "The declared range of dim 1 of input 't' (min 1, opt 3, "
            "max 6) holds sizes this program cannot run: 3, 5, 6 (it "
            "runs for 1, 2, 4)"
        ),
    ):
        tp.compile(f, args=[tp.InputInfo(((1, 2, 4), (1, 3, 6)), tp.float32)])


@pytest.mark.parametrize("op", ["//", "%", "/"])
def test_integer_division_by_zero_is_zero_in_shape_arithmetic_and_on_tensors(op):
    apply = {"//": lambda a, b: a // b, "%": lambda a, b: a % b, "/": lambda a, b: a / b}[op]
    exe = tp.compile(
        lambda t: tp.ones((apply(t.shape[0], t.shape[1] % 3) + 1,)),
        args=[tp.InputInfo(((1, 4, 8), (2, 3, 4)), tp.float32)],
    )
    for rows, cols in [(4, 3), (5, 4), (6, 2)]:
        divisor = cols % 3
        size = 0 if divisor == 0 else (rows // divisor if op != "%" else rows % divisor)
        assert np.from_dlpack(exe(tp.Tensor(np.zeros((rows, cols), np.float32)))).shape == (size + 1,)
    if op != "/":  # (an integer tensor's '/' is true division, as in NumPy: x / 0 is inf there)
        a, b = np.array([7, -7, 5], np.int32), np.array([2, 0, 0], np.int32)
        assert np.from_dlpack(apply(tp.Tensor(a), tp.Tensor(b))).tolist()[1:] == [0, 0]
