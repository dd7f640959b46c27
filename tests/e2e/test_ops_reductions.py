"""End-to-end checks of prod, var, all, any, argmax, argmin, topk, cumsum, allclose and equal against NumPy,
in eager and compiled mode."""

import re

import numpy as np
import pytest

import tripy as tp

RNG = np.random.default_rng(2)


def rand(*shape, dtype=np.float32, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def raises(match, fn, *args, **kwargs):
    """The call raises a TripyException matching `match` whose report points at this file."""
    with pytest.raises(tp.TripyException, match=match) as info:
        fn(*args, **kwargs)
    assert __file__ in str(info.value)
    return str(info.value)


DIMS = [None, 0, -1, (0, 2), (-1, 0, 1)]


# ---- prod / var ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_prod(eager_or_compiled, dim, keepdim):
    x = rand(2, 3, 4, low=0.5, high=1.5)
    out = eager_or_compiled(lambda t: tp.prod(t, dim=dim, keepdim=keepdim), tp.Tensor(x))
    assert np.allclose(np.from_dlpack(out), np.prod(x, axis=dim, keepdims=keepdim), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_prod_int(eager_or_compiled, dtype):
    x = np.array([[1, -2, 3], [2, 2, -1]], dtype=dtype)
    out = eager_or_compiled(lambda t: tp.prod(t, dim=1), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), np.prod(x, axis=1).astype(dtype))


def test_prod_edge_cases(eager_or_compiled):
    assert eager_or_compiled(lambda t: tp.prod(t), tp.Tensor(3.0)).tolist() == 3.0
    out = eager_or_compiled(lambda t: tp.prod(t, dim=0), tp.Tensor(np.zeros((0, 3), np.float32)))
    assert out.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("correction", [1, 0, 2])
def test_var(eager_or_compiled, dim, keepdim, correction):
    x = rand(2, 3, 4)
    out = eager_or_compiled(lambda t: tp.var(t, dim=dim, keepdim=keepdim, correction=correction), tp.Tensor(x))
    expected = np.var(x.astype(np.float64), axis=dim, keepdims=keepdim, ddof=correction)
    assert out.dtype == tp.float32
    assert np.allclose(np.from_dlpack(out), expected, rtol=1e-5, atol=1e-6)


def test_var_edge_cases(eager_or_compiled):
    # N <= correction: 0 / 0 -> nan (PyTorch semantics), and rank 0 has N = 1.
    assert np.isnan(eager_or_compiled(lambda t: tp.var(t), tp.Tensor(2.0)).tolist())
    assert eager_or_compiled(lambda t: tp.var(t, correction=0), tp.Tensor(2.0)).tolist() == 0.0
    assert eager_or_compiled(lambda t: tp.var(t, 0, correction=0), tp.Tensor(2.0)).tolist() == 0.0
    out = eager_or_compiled(lambda t: tp.var(t, dim=1), tp.Tensor(rand(3, 1)))
    assert np.all(np.isnan(np.from_dlpack(out)))
    out = eager_or_compiled(lambda t: tp.var(t, dim=0), tp.Tensor(np.zeros((0, 2), np.float32)))
    assert np.all(np.isnan(np.from_dlpack(out)))
    # Centered first: no catastrophic cancellation. (Eighths near 1e4: their sums are exact in float32, so both modes
    # center on the same mean and differ only in the order they add the squares; with any data, the mean's rounding
    # moved the two modes' results apart by up to 2e-5, relative.)
    big = (1e4 + np.random.default_rng(7).integers(0, 9, 50) / 8).astype(np.float32)
    out = eager_or_compiled(lambda t: tp.var(t), tp.Tensor(big))
    assert np.allclose(out.tolist(), np.var(big.astype(np.float64), ddof=1), rtol=1e-3)


def test_var_half_precision(eager_or_compiled):
    x = rand(4, 8)
    out = eager_or_compiled(lambda t: tp.var(t, dim=1), tp.cast(tp.Tensor(x), tp.float16))
    assert out.dtype == tp.float16
    assert np.allclose(np.from_dlpack(out), np.var(x, axis=1, ddof=1), rtol=1e-2, atol=1e-2)


def test_var_errors():
    raises("tripy.var does not support dtype int32", tp.var, tp.Tensor([1, 2]))
    raises(re.escape("tripy.var: dim 2 is out of range for a tensor of rank 2"), tp.var, tp.zeros((2, 2)), dim=2)
    raises("tripy.var: argument 'correction' must be int, but got float", tp.var, tp.zeros((2,)), correction=0.5)


# ---- all / any -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,ref", [("all", np.all), ("any", np.any)])
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_all_any(eager_or_compiled, name, ref, dim, keepdim):
    x = RNG.uniform(size=(2, 3, 4)) < 0.8
    x[0, 0, :] = True  # make sure some slices are all True and some are all False
    x[1, 2, :] = False
    out = eager_or_compiled(lambda t: getattr(tp, name)(t, dim=dim, keepdim=keepdim), tp.Tensor(x))
    assert out.dtype == tp.bool
    assert np.array_equal(np.from_dlpack(out), ref(x, axis=dim, keepdims=keepdim))


@pytest.mark.parametrize("name,ref", [("all", np.all), ("any", np.any)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_all_any_numeric_means_nonzero(eager_or_compiled, name, ref, dtype):
    x = np.array([[0, 1, 2], [3, 4, 5], [0, 0, 0]], dtype=dtype)
    out = eager_or_compiled(lambda t: getattr(tp, name)(t, dim=1), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), ref(x, axis=1))


def test_all_any_edge_cases(eager_or_compiled):
    assert eager_or_compiled(tp.all, tp.Tensor(True)).tolist() is True
    assert eager_or_compiled(tp.any, tp.Tensor(False)).tolist() is False
    assert eager_or_compiled(lambda t: tp.all(t, dim=-1, keepdim=True), tp.Tensor(False)).tolist() is False
    empty = tp.Tensor(np.zeros((0, 3), bool))
    assert eager_or_compiled(tp.all, empty).tolist() is True
    assert eager_or_compiled(tp.any, empty).tolist() is False
    assert eager_or_compiled(lambda t: tp.all(t, dim=0), empty).tolist() == [True] * 3


def test_all_any_errors():
    raises(re.escape("tripy.all: dim 3 is out of range for a tensor of rank 2"), tp.all, tp.zeros((2, 2)) > 0, dim=3)
    raises(
        re.escape("tripy.any: dims [0, -2] name a dimension more than once"), tp.any, tp.zeros((2, 2)) > 0, dim=(0, -2)
    )


# ---- argmax / argmin -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,ref", [("argmax", np.argmax), ("argmin", np.argmin)])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(eager_or_compiled, name, ref, dim, keepdim):
    x = rand(3, 4, 5)
    out = eager_or_compiled(lambda t: getattr(tp, name)(t, dim=dim, keepdim=keepdim), tp.Tensor(x))
    assert out.dtype == tp.int32
    assert np.array_equal(np.from_dlpack(out), ref(x, axis=dim, keepdims=keepdim))


@pytest.mark.parametrize("name,ref", [("argmax", np.argmax), ("argmin", np.argmin)])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.float16])
def test_argmax_argmin_ties_take_first(eager_or_compiled, name, ref, dtype):
    x = np.array([[1, 3, 3, 0, 0], [2, 2, 2, 2, 2], [-5, 7, -5, 7, 1]], dtype=dtype)
    for dim in (0, 1):
        out = eager_or_compiled(lambda t: getattr(tp, name)(t, dim=dim), tp.Tensor(x))
        assert np.array_equal(np.from_dlpack(out), ref(x, axis=dim))


def test_argmax_argmin_extremes_and_nan(eager_or_compiled):
    x = np.array(
        [[-np.inf, -np.inf, 1.0], [np.inf, 2.0, np.inf], [1.0, np.nan, np.nan], [np.nan, 5.0, -np.inf]], np.float32
    )
    for name, ref in (("argmax", np.argmax), ("argmin", np.argmin)):
        out = eager_or_compiled(lambda t: getattr(tp, name)(t, dim=1), tp.Tensor(x))
        assert np.array_equal(np.from_dlpack(out), ref(x, axis=1)), name
    i = np.iinfo(np.int32)
    xi = np.array([i.min, i.max, i.min, i.max], np.int32)
    assert eager_or_compiled(tp.argmax, tp.Tensor(xi)).tolist() == 1
    assert eager_or_compiled(tp.argmin, tp.Tensor(xi)).tolist() == 0


def test_argmax_rank0(eager_or_compiled):
    out = eager_or_compiled(tp.argmax, tp.Tensor(4.0))
    assert out.tolist() == 0 and tuple(out.shape) == ()
    assert eager_or_compiled(lambda t: tp.argmin(t, dim=0), tp.Tensor(4.0)).tolist() == 0


def test_argmax_errors():
    raises("tripy.argmax: cannot reduce over dim 1, which has size 0", tp.argmax, tp.zeros((2, 0)), dim=1)
    raises(re.escape("tripy.argmin: dim -3 is out of range for a tensor of rank 2"), tp.argmin, tp.zeros((2, 2)), -3)
    raises("tripy.argmax does not support dtype bool", tp.argmax, tp.Tensor([True, False]))


# ---- topk -------------------------------------------------------------------------------------------------------
def np_topk(x, k, dim):
    order = np.argsort(-x, axis=dim, kind="stable")
    idx = np.take(order, np.arange(k), axis=dim)
    return np.take_along_axis(x, idx, axis=dim), idx


@pytest.mark.parametrize(
    "shape,k,dim",
    [
        ((10,), 3, 0),
        ((4, 6), 2, 1),
        ((4, 6), 4, 0),
        ((2, 3, 5), 5, -1),
        ((2, 3, 5), 1, 1),
        ((3, 4), 0, 1),
        ((0, 4), 2, 1),
    ],
)
def test_topk(eager_or_compiled, shape, k, dim):
    x = rand(*shape)
    values, indices = eager_or_compiled(lambda t: tp.topk(t, k, dim), tp.Tensor(x))
    ev, ei = np_topk(x, k, dim)
    assert values.dtype == tp.float32 and indices.dtype == tp.int32
    assert np.array_equal(np.from_dlpack(values), ev)
    assert np.array_equal(np.from_dlpack(indices), ei)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.float16])
def test_topk_ties_keep_lower_index_first(eager_or_compiled, dtype):
    x = np.array([[3, 1, 3, 2, 3, 1], [0, 0, 0, 0, 0, 0]], dtype=dtype)
    values, indices = eager_or_compiled(lambda t: tp.topk(t, 4, 1), tp.Tensor(x))
    ev, ei = np_topk(x, 4, 1)
    assert np.array_equal(np.from_dlpack(values), ev) and np.array_equal(np.from_dlpack(indices), ei)


def test_topk_nan_and_inf(eager_or_compiled):
    nan = np.float32(np.nan)
    x = np.array([1.0, -np.inf, np.inf, nan, -nan, 0.0], np.float32)  # -nan: NaN with the sign bit set
    values, indices = eager_or_compiled(lambda t: tp.topk(t, 4, 0), tp.Tensor(x))
    v = np.from_dlpack(values)
    assert np.isnan(v[0]) and np.isnan(v[1]) and v[2] == np.inf and v[3] == 1.0
    assert indices.tolist() == [3, 4, 2, 0]


def test_topk_rank0(eager_or_compiled):
    values, indices = eager_or_compiled(lambda t: tp.topk(t, 1, 0), tp.Tensor(2.5))
    assert values.tolist() == 2.5 and indices.tolist() == 0


def test_topk_errors():
    raises(re.escape("tripy.topk: k (7) is larger than the size of dim 1 (6)"), tp.topk, tp.zeros((2, 6)), 7, 1)
    raises("tripy.topk: k must be a non-negative int, but got -1", tp.topk, tp.zeros((2, 6)), -1, 1)
    raises("tripy.topk: argument 'k' must be int, but got float", tp.topk, tp.zeros((2, 6)), 1.0, 1)
    raises(re.escape("tripy.topk: dim 2 is out of range for a tensor of rank 2"), tp.topk, tp.zeros((2, 6)), 1, 2)
    raises("tripy.topk does not support dtype bool", tp.topk, tp.Tensor([True]), 1, 0)


# ---- cumsum -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape,dim",
    [((7,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -2), ((2, 3, 4), 2), ((0, 3), 0), ((3, 0), 0), ((1, 1), 1)],
)
def test_cumsum(eager_or_compiled, shape, dim):
    x = rand(*shape)
    out = eager_or_compiled(lambda t: tp.cumsum(t, dim), tp.Tensor(x))
    assert tuple(out.shape) == shape
    assert np.allclose(np.from_dlpack(out), np.cumsum(x, axis=dim), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_cumsum_int_is_exact(eager_or_compiled, dtype):
    x = np.array([[1, -2, 3, 4], [5, 6, -7, 8]], dtype=dtype)
    out = eager_or_compiled(lambda t: tp.cumsum(t, 1), tp.Tensor(x))
    assert out.dtype == tp.Tensor(x).dtype
    assert np.array_equal(np.from_dlpack(out), np.cumsum(x, axis=1).astype(dtype))
    big = np.full((3,), 2**40, np.int64)
    assert eager_or_compiled(lambda t: tp.cumsum(t, 0), tp.Tensor(big)).tolist() == [2**40, 2**41, 3 * 2**40]


def test_cumsum_inf_and_nan(eager_or_compiled):
    x = np.array([1.0, np.inf, 2.0, -np.inf, 3.0, np.nan, 4.0], np.float32)
    out = eager_or_compiled(lambda t: tp.cumsum(t, 0), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), np.cumsum(x), equal_nan=True)
    x = np.array([1.0, 2.0, np.inf], np.float32)  # inf after finite values must not poison them
    assert eager_or_compiled(lambda t: tp.cumsum(t, 0), tp.Tensor(x)).tolist() == [1.0, 3.0, np.inf]


def test_cumsum_rank0(eager_or_compiled):
    assert eager_or_compiled(lambda t: tp.cumsum(t, 0), tp.Tensor(5.0)).tolist() == 5.0


def test_cumsum_errors():
    raises(re.escape("tripy.cumsum: dim 2 is out of range for a tensor of rank 2"), tp.cumsum, tp.zeros((2, 2)), 2)
    raises("tripy.cumsum does not support dtype bool", tp.cumsum, tp.Tensor([True]), 0)


# ---- allclose / equal ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a,b,kwargs",
    [
        ([1e-7], [1.1e-7], {}),
        ([1e-7], [1.2e-7], {}),
        ([1.0, 2.0], [1.0, 2.0 + 1e-5], {}),
        ([1.0, 2.0], [1.0, 2.1], {}),
        ([1.0, 2.0], [1.0, 2.1], {"atol": 0.2}),
        ([100.0], [101.0], {"rtol": 0.01}),
        ([100.0], [101.0], {"rtol": 0.009}),
        ([np.inf, -np.inf], [np.inf, -np.inf], {}),
        ([np.inf], [-np.inf], {}),
        ([np.nan], [np.nan], {}),
        ([[1.0, 2.0]], [1.0, 2.0], {}),
        ([], [], {}),
    ],
)
def test_allclose(a, b, kwargs):
    a, b = np.array(a, np.float32), np.array(b, np.float32)
    out = tp.allclose(tp.Tensor(a), tp.Tensor(b), **kwargs)
    assert type(out) is bool
    assert out == np.allclose(a, b, **kwargs)


def test_allclose_errors():
    raises("tripy.allclose does not support dtype int32", tp.allclose, tp.Tensor([1]), tp.Tensor([1]))
    raises(
        "tripy.allclose: 'input' and 'other' must have the same data type, but got float32 and float16",
        tp.allclose,
        tp.Tensor([1.0]),
        tp.cast(tp.Tensor([1.0]), tp.float16),
    )


@pytest.mark.parametrize(
    "a,b",
    [
        ([1, 2], [1, 2]),
        ([1, 2], [1, 3]),
        ([1, 2], [1, 2, 3]),
        ([[1, 2]], [1, 2]),
        ([[1], [2]], [[1, 2]]),
        (3, 3),
        (3, 4),
        ([], []),
        ([[]], []),
    ],
)
def test_equal(a, b):
    na, nb = np.array(a, np.int32), np.array(b, np.int32)
    out = tp.equal(tp.Tensor(na), tp.Tensor(nb))
    assert type(out) is bool
    assert out == np.array_equal(na, nb)


def test_equal_floats_and_bools():
    assert tp.equal(tp.Tensor([True, False]), tp.Tensor([True, False]))
    assert not tp.equal(tp.Tensor([True, False]), tp.Tensor([True, True]))
    assert not tp.equal(tp.Tensor([np.nan]), tp.Tensor([np.nan]))
    assert tp.equal(tp.Tensor([0.0]), tp.Tensor([-0.0]))


def test_equal_errors():
    raises(
        "tripy.equal: 'input' and 'other' must have the same data type, but got int32 and float32",
        tp.equal,
        tp.Tensor([1]),
        tp.Tensor([1.0]),
    )
    raises("tripy.equal: argument 'other' must be tripy.Tensor, but got list", tp.equal, tp.Tensor([1]), [1])


# ---- dynamic shapes: one compiled program, several input shapes ---------------------------------------------
def compile_dynamic(fn, *example_arrays):
    """Compile `fn` with every dim of every input dynamic in [0 or 1, size, size + 3]."""
    infos = [tp.InputInfo(tuple((1, s, s + 3) for s in a.shape), tp.Tensor(a).dtype) for a in example_arrays]
    return tp.compile(fn, args=infos)


@pytest.mark.parametrize(
    "name,fn,ref",
    [
        ("cumsum", lambda t: tp.cumsum(t, 1), lambda x: np.cumsum(x, 1)),
        ("argmax", lambda t: tp.argmax(t, -1, keepdim=True), lambda x: np.argmax(x, -1, keepdims=True)),
        ("argmin_flat", lambda t: tp.argmin(t), lambda x: np.argmin(x)),
        ("topk", lambda t: tp.topk(t, 2, 1), lambda x: np_topk(x, 2, 1)),
        ("var", lambda t: tp.var(t, (0, 2)), lambda x: np.var(x.astype(np.float64), (0, 2), ddof=1)),
        ("all", lambda t: tp.all(t > -1.5, 1, keepdim=True), lambda x: np.all(x > -1.5, 1, keepdims=True)),
    ],
)
def test_reductions_with_dynamic_shapes(name, fn, ref):
    exe = compile_dynamic(fn, rand(2, 3, 4))
    for shape in [(2, 3, 4), (4, 5, 2), (1, 2, 6)]:
        x = rand(*shape)
        out, expected = exe(tp.Tensor(x)), ref(x)
        outs, exps = (out, expected) if isinstance(expected, tuple) else ((out,), (expected,))
        for o, e in zip(outs, exps):
            assert np.allclose(np.from_dlpack(o), e, rtol=1e-5, atol=1e-6), (name, shape)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 9])
def test_cumsum_static_length_dynamic_batch(n):
    # The scanned dim is static (scan lowering) while the other dims are only known at run time.
    exe = tp.compile(lambda t: tp.cumsum(t, 1), args=[tp.InputInfo(((1, 2, 5), n, (1, 3, 4)), tp.float32)])
    for shape in [(2, n, 3), (5, n, 1)]:
        x = rand(*shape)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), np.cumsum(x, 1), rtol=1e-5, atol=1e-5)


def test_cumsum_long_int_sequence(eager_or_compiled):
    x = np.arange(1000, dtype=np.int64) - 300
    out = eager_or_compiled(lambda t: tp.cumsum(t, 0), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), np.cumsum(x))
