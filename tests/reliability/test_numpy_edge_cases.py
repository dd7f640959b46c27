"""The causes the differential fuzz (tests/fuzz) found, each pinned: eager and compiled results against NumPy,
and errors that name the user's line."""

import warnings

import numpy as np
import pytest

import tripy as tp


def raises(match, fn, *args):
    with pytest.raises(tp.TripyException, match=match) as info:
        fn(*args)
    assert __file__ in str(info.value), str(info.value)
    return str(info.value)


def numpy(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


def test_matmul_with_size_one_batch_dim_and_dynamic_dims():
    exe = tp.compile(
        lambda a, b: a @ b, args=[tp.InputInfo((1, (2, 4, 6), 3, 3), tp.float32), tp.InputInfo((3, 5), tp.float32)]
    )
    a = np.arange(1 * 5 * 3 * 3, dtype=np.float32).reshape(1, 5, 3, 3)
    b = np.arange(15, dtype=np.float32).reshape(3, 5)
    assert np.allclose(np.from_dlpack(exe(tp.Tensor(a), tp.Tensor(b))), a @ b)


@pytest.mark.parametrize(
    "shape, index",
    [
        ((0, 3), np.s_[::-1]),
        ((2, 4), np.s_[:, -5::-1]),
        ((10,), np.s_[-12:-5:-1]),
        ((3, 0), np.s_[1::-2, ::-3]),
        ((4,), np.s_[-5:-6:-1]),
    ],
)
def test_empty_slices_with_negative_steps(eager_or_compiled, shape, index):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out = eager_or_compiled(lambda t: t[index], tp.Tensor(x))
    assert np.from_dlpack(out).shape == x[index].shape


@pytest.mark.parametrize("op", [tp.max, tp.min])
def test_max_min_over_an_empty_dim_raise(op):
    x = tp.Tensor(np.zeros((0, 3), np.float32))
    raises("size 0", lambda: op(x, dim=0))
    raises("size 0", lambda: op(x))
    assert op(x, dim=1).shape == (0,)  # reducing the other dim is fine


@pytest.mark.parametrize(
    "row",
    [
        [0.0, np.nan, 0.0],
        [0.0, np.inf, 0.0],
        [np.inf, np.inf, 0.0],
        [-np.inf, -np.inf],
        [1.0, 2.0, 3.0],
        [-np.inf, 0.0, 1.0],
    ],
)
def test_softmax_with_nan_and_infinities(eager_or_compiled, row):
    x = np.array([row, [1.0] * len(row)], np.float32)
    e = numpy(lambda: np.exp(x - x.max(axis=1, keepdims=True)))
    out = eager_or_compiled(lambda t: tp.softmax(t, dim=1), tp.Tensor(x))
    np.testing.assert_allclose(np.from_dlpack(out), numpy(lambda: e / e.sum(axis=1, keepdims=True)), rtol=1e-6)


def test_softmax_over_an_empty_dim(eager_or_compiled):
    out = eager_or_compiled(lambda t: tp.softmax(t, dim=0), tp.Tensor(np.zeros((0, 3), np.float32)))
    assert np.from_dlpack(out).shape == (0, 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_floor_division_and_remainder_with_infinities_and_zeros(eager_or_compiled, dtype):
    a = np.array([np.inf, -np.inf, 1.0, -1.0, 5.0, -0.0, np.nan, 3.0, -3.0, 7.0, -7.5, 0.0], dtype)
    b = np.array([2.0, 2.0, -np.inf, np.inf, np.inf, 1.0, 1.0, 0.0, 0.0, 0.1, 2.0, 0.0], dtype)
    fdiv = eager_or_compiled(lambda x, y: x // y, tp.Tensor(a), tp.Tensor(b))
    np.testing.assert_array_equal(np.from_dlpack(fdiv), numpy(np.floor_divide, a, b))
    rem = eager_or_compiled(lambda x, y: x % y, tp.Tensor(a), tp.Tensor(b))
    np.testing.assert_array_equal(np.from_dlpack(rem), numpy(np.mod, a, b))
    assert [(float(x) // float(y)) for x, y in zip(a[:5], b[:5])] == np.from_dlpack(fdiv)[:5].tolist() or np.isnan(
        np.from_dlpack(fdiv)[:2]
    ).all()  # Python's own float // agrees (inf // 2.0 is nan)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_floor_division_and_remainder_by_zero_give_zero(eager_or_compiled, dtype):
    a = np.array([7, -7, 0, 5, np.iinfo(dtype).min, 9], dtype)
    b = np.array([0, 0, 0, 2, -1, -4], dtype)
    fdiv = eager_or_compiled(lambda x, y: x // y, tp.Tensor(a), tp.Tensor(b))
    rem = eager_or_compiled(lambda x, y: x % y, tp.Tensor(a), tp.Tensor(b))
    np.testing.assert_array_equal(np.from_dlpack(fdiv), numpy(np.floor_divide, a, b))  # NumPy: x // 0 == 0
    np.testing.assert_array_equal(np.from_dlpack(rem), numpy(np.mod, a, b))


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1, 2**40])
def test_python_int_that_does_not_fit_raises(value):
    x = tp.Tensor(np.array([1, 2], np.int32))
    raises("does not fit", lambda: x + value)
    raises("does not fit", lambda: value * x)
    assert (x + (2**31 - 1)).tolist() == np.add(np.array([1, 2], np.int32), 2**31 - 1).tolist()  # wraps, as NumPy


@pytest.mark.parametrize("shape", [(2**20, 2**20, 1024), (2**62, 4)])
def test_shapes_too_big_raise_naming_the_line(shape):
    text = raises("too large to allocate", lambda: tp.ones(shape).eval())
    assert "tp.ones(shape)" in text


def test_float16_sum_and_prod_accumulate_in_float32(eager_or_compiled):
    x = np.array([[300, 300, 0, 300], [300, 300, 1 / 300, 1 / 300], [60000, 60000, -60000, 1]], np.float16)
    prod = eager_or_compiled(lambda t: tp.prod(t, dim=1), tp.Tensor(x))
    np.testing.assert_allclose(np.from_dlpack(prod).astype(np.float32), [0, 1, -np.inf], rtol=1e-2)
    total = eager_or_compiled(lambda t: tp.sum(t, dim=1), tp.Tensor(x))
    np.testing.assert_allclose(np.from_dlpack(total), np.sum(x, axis=1), rtol=1e-3)


def test_rank0_transpose_and_squeeze_are_identity_as_in_pytorch(eager_or_compiled):
    x = tp.Tensor(np.float32(3.5))
    assert eager_or_compiled(lambda t: tp.transpose(t, 0, -1), x).tolist() == 3.5
    assert eager_or_compiled(lambda t: tp.squeeze(t, 0), x).tolist() == 3.5
    raises("out of range", lambda: tp.transpose(x, 0, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_exp_of_a_nan_known_at_compile_time(eager_or_compiled, dtype):
    """XLA:CPU's exp gives garbage for a NaN it can fold (exp(x + nan), softmax of x + nan)."""
    x = tp.Tensor(np.array([1.0, 2.0], dtype))
    assert np.isnan(np.from_dlpack(eager_or_compiled(lambda t: tp.exp(t + float("nan")), x))).all()
    assert np.isnan(np.from_dlpack(eager_or_compiled(lambda t: tp.softmax(t * float("nan"), dim=0), x))).all()


def test_softmax_of_huge_products(eager_or_compiled):
    """XLA:CPU fuses the product into softmax's subtraction (a fused multiply-add): the maximum must still give 1."""
    a = np.array([1e30, 0.26, 2.57, 1.18], np.float32).reshape(4, 1, 1, 1)
    b = np.array([[2.829, 1.842]], np.float32)
    out = eager_or_compiled(lambda x, y: tp.softmax(x @ y, dim=0), tp.Tensor(a), tp.Tensor(b))
    np.testing.assert_allclose(np.from_dlpack(out)[:, 0, 0, :], [[1, 1], [0, 0], [0, 0], [0, 0]])


def test_two_dynamic_dims_broadcast_when_one_is_one_at_run_time():
    exe = tp.compile(
        lambda a, b: a * b, args=[tp.InputInfo(((1, 2, 4),), tp.float32), tp.InputInfo(((1, 2, 4),), tp.float32)]
    )
    for n, m in [(1, 3), (3, 1), (3, 3)]:
        a, b = np.arange(1, n + 1, dtype=np.float32), np.arange(1, m + 1, dtype=np.float32) * 10
        assert np.array_equal(np.from_dlpack(exe(tp.Tensor(a), tp.Tensor(b))), a * b)
    with pytest.raises(tp.TripyException):
        exe(tp.ones((2,)), tp.ones((3,)))
