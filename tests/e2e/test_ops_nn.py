"""End-to-end checks of softmax and outer against NumPy, in eager and compiled mode."""

import re

import numpy as np
import pytest

import tripy as tp

RNG = np.random.default_rng(3)


def rand(*shape, dtype=np.float32, low=-3.0, high=3.0):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def raises(match, fn, *args, **kwargs):
    """The call raises a TripyException matching `match` whose report points at this file."""
    with pytest.raises(tp.TripyException, match=match) as info:
        fn(*args, **kwargs)
    assert __file__ in str(info.value)
    return str(info.value)


def np_softmax(x, dim):
    x = x.astype(np.float64)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


# ---- softmax ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape,dim",
    [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((3, 4), -1), ((2, 3, 4), 1), ((2, 3, 4), None), ((3, 4), None), ((1, 1), 1)],
)
def test_softmax(eager_or_compiled, shape, dim):
    x = rand(*shape)
    out = eager_or_compiled(lambda t: tp.softmax(t, dim), tp.Tensor(x))
    assert out.dtype == tp.float32 and tuple(out.shape) == shape
    assert np.allclose(np.from_dlpack(out), np_softmax(x, dim), rtol=1e-5, atol=1e-7)


def test_softmax_is_numerically_stable(eager_or_compiled):
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0], [88.0, 89.0, 90.0]], np.float32)
    out = np.from_dlpack(eager_or_compiled(lambda t: tp.softmax(t, 1), tp.Tensor(x)))
    assert np.all(np.isfinite(out))
    assert np.allclose(out, np_softmax(x, 1), rtol=1e-5, atol=1e-7)


def test_softmax_masked_with_neg_inf(eager_or_compiled):
    # The attention-mask pattern: -inf entries get probability 0.
    x = rand(3, 4)
    mask = np.triu(np.ones((3, 4), bool), 1)
    out = eager_or_compiled(
        lambda t, m: tp.softmax(tp.masked_fill(t, m, float("-inf")), -1), tp.Tensor(x), tp.Tensor(mask)
    )
    ref = np_softmax(np.where(mask, -np.inf, x), -1)
    assert np.allclose(np.from_dlpack(out), ref, rtol=1e-5, atol=1e-7)
    assert np.all(np.from_dlpack(out)[mask] == 0)


def test_softmax_rank0_and_empty(eager_or_compiled):
    assert eager_or_compiled(lambda t: tp.softmax(t), tp.Tensor(3.0)).tolist() == 1.0
    assert eager_or_compiled(lambda t: tp.softmax(t, 0), tp.Tensor(-3.0)).tolist() == 1.0
    out = eager_or_compiled(lambda t: tp.softmax(t, 1), tp.Tensor(np.zeros((0, 3), np.float32)))
    assert tuple(out.shape) == (0, 3)
    out = eager_or_compiled(lambda t: tp.softmax(t, 0), tp.Tensor(np.zeros((0, 3), np.float32)))
    assert tuple(out.shape) == (0, 3)


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16])
def test_softmax_half_precision(eager_or_compiled, dtype):
    x = rand(4, 6)
    out = eager_or_compiled(lambda t: tp.softmax(t, 1), tp.cast(tp.Tensor(x), dtype))
    assert out.dtype == dtype
    got = np.asarray(tp.cast(out, tp.float32))
    assert np.allclose(got, np_softmax(x, 1), atol=1e-2)


def test_softmax_errors():
    raises("tripy.softmax does not support dtype int32", tp.softmax, tp.Tensor([1, 2]), 0)
    raises(re.escape("tripy.softmax: dim 2 is out of range for a tensor of rank 2"), tp.softmax, tp.zeros((2, 2)), 2)
    raises("tripy.softmax: argument 'dim' must be", tp.softmax, tp.zeros((2, 2)), 1.0)


# ---- outer ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,m", [(3, 4), (1, 5), (4, 1), (0, 3), (3, 0)])
def test_outer(eager_or_compiled, n, m):
    a, b = rand(n), rand(m)
    out = eager_or_compiled(tp.outer, tp.Tensor(a), tp.Tensor(b))
    assert tuple(out.shape) == (n, m)
    assert np.allclose(np.from_dlpack(out), np.outer(a, b), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float16])
def test_outer_dtypes(eager_or_compiled, dtype):
    a, b = np.array([1, -2, 3], dtype), np.array([4, 5], dtype)
    out = eager_or_compiled(tp.outer, tp.Tensor(a), tp.Tensor(b))
    assert np.array_equal(np.from_dlpack(out), np.outer(a, b).astype(dtype))


def test_outer_errors():
    raises("tripy.outer: vec1 must be 1-D, but it has rank 2", tp.outer, tp.zeros((2, 2)), tp.zeros((2,)))
    raises("tripy.outer: vec2 must be 1-D, but it has rank 0", tp.outer, tp.zeros((2,)), tp.Tensor(1.0))
    raises("tripy.outer does not support dtype bool", tp.outer, tp.Tensor([True]), tp.Tensor([True]))
    raises(
        re.escape("tripy.outer: 'vec1' and 'vec2' must have the same data type, but got float32 and int32"),
        tp.outer,
        tp.zeros((2,)),
        tp.Tensor([1, 2]),
    )


# ---- quantize / dequantize ------------------------------------------------------------------------------
def np_quantize(x, scale, dtype, dim=None):
    import ml_dtypes

    if dim is not None:
        shape = [1] * x.ndim
        shape[dim] = -1
        scale = np.asarray(scale, np.float32).reshape(shape)
    scaled = x.astype(np.float32) / np.asarray(scale, np.float32)
    if dtype == tp.int8:
        return np.clip(np.round(scaled), -128, 127).astype(np.int8)
    if dtype == tp.int4:
        return np.clip(np.round(scaled), -8, 7).astype(ml_dtypes.int4)
    return np.clip(scaled, -448, 448).astype(ml_dtypes.float8_e4m3fn)


@pytest.mark.parametrize("qdtype", [tp.int4, tp.int8, tp.float8])
@pytest.mark.parametrize(
    "shape,dim", [((2, 3), None), ((4, 3), 0), ((4, 3), 1), ((2, 3, 4), -1), ((), None), ((0, 3), 1)]
)
def test_quantize_dequantize(eager_or_compiled, qdtype, shape, dim):
    x = rand(*shape, low=-300, high=300)
    if x.size:
        x.flat[0] = 2.5  # a tie: rounds half to even for int8
    scale = np.float32(0.5) if dim is None else RNG.uniform(0.5, 2.0, size=shape[dim]).astype(np.float32)
    scale_arg = float(scale) if dim is None else scale.tolist()
    q = eager_or_compiled(lambda t: tp.quantize(t, scale_arg, qdtype, dim), tp.Tensor(x))
    assert q.dtype == qdtype and tuple(q.shape) == shape
    expected = np_quantize(x, scale, qdtype, dim)
    assert np.array_equal(np.asarray(q).astype(np.float32), expected.astype(np.float32))
    out = eager_or_compiled(lambda t: tp.dequantize(t, scale_arg, tp.float32, dim), q.eval())
    assert out.dtype == tp.float32
    bshape = [1] * len(shape)
    if dim is not None:
        bshape[dim] = -1
    assert np.allclose(np.from_dlpack(out), expected.astype(np.float32) * scale.reshape(bshape), rtol=1e-6)


def test_quantize_int4_blockwise(eager_or_compiled):
    x = rand(6, 4, low=-20, high=20)
    scale = RNG.uniform(0.5, 3.0, size=(3, 4)).astype(np.float32)  # 3 blocks of 2 rows
    q = eager_or_compiled(lambda t: tp.quantize(t, scale.tolist(), tp.int4), tp.Tensor(x))
    full = np.repeat(scale, 2, axis=0)
    expected = np.clip(np.round(x / full), -8, 7)
    assert q.dtype == tp.int4 and np.array_equal(np.asarray(q).astype(np.float32), expected)
    s = tp.Tensor(scale)  # a constant (baked into the compiled program), as a scale must be
    out = eager_or_compiled(lambda t: tp.dequantize(t, s, tp.float32), q.eval())
    assert np.allclose(np.from_dlpack(out), expected * full, rtol=1e-6)
    assert tp.cast(q, tp.bool).tolist() == (expected != 0).tolist()


def test_quantize_with_scale_tensors(eager_or_compiled):
    x = rand(3, 4, low=-10, high=10)
    scale = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    s, s0 = tp.Tensor(scale), (tp.Tensor([0.5]) / 2)[0].eval()  # constants: data, and an evaluated result
    q = eager_or_compiled(lambda t: tp.quantize(t, s, tp.int8, dim=1), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(q), np_quantize(x, scale, tp.int8, 1))
    q = eager_or_compiled(lambda t: tp.quantize(t, s0, tp.int8), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(q), np_quantize(x, 0.25, tp.int8))
    out = eager_or_compiled(lambda t: tp.dequantize(t, s, tp.float32, dim=1), q.eval())
    assert np.allclose(np.from_dlpack(out), np.from_dlpack(q) * scale, rtol=1e-6)


def test_quantize_scale_must_be_a_constant():
    # as in nvtripy 0.1.7: a scale computed by operations that have not run (or from a runtime input) is refused
    x = tp.Tensor(rand(2, 4))
    computed = tp.Tensor([0.5]) * 2
    for op, arg in [(tp.quantize, x), (tp.dequantize, tp.quantize(x, 0.5, tp.int8))]:
        with pytest.raises(tp.TripyException, match="the scale must be a constant") as err:
            op(arg, computed[0], tp.int8 if op is tp.quantize else tp.float32)  # MARK-scale
        assert "# MARK-scale" in str(err.value) and "scale.eval()" in str(err.value)  # the user's line, the fix
    with pytest.raises(tp.TripyException, match="the scale must be a constant"):
        tp.compile(
            lambda t, s: tp.quantize(t, s, tp.int8),
            args=[tp.InputInfo((2, 4), tp.float32), tp.InputInfo((), tp.float32)],
        )


@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16])
def test_quantize_half_precision(eager_or_compiled, dtype):
    x = np.array([[-3.0, -0.5, 0.0, 1.5, 100.0]], np.float32)
    q = eager_or_compiled(lambda t: tp.quantize(t, 0.5, tp.int8), tp.cast(tp.Tensor(x), dtype))
    assert q.tolist() == [[-6, -1, 0, 3, 127]]
    out = eager_or_compiled(lambda t: tp.dequantize(t, 0.5, dtype), q.eval())
    assert out.dtype == dtype
    assert np.asarray(tp.cast(out, tp.float32)).tolist() == [[-3.0, -0.5, 0.0, 1.5, 63.5]]


def test_quantize_errors():
    x = tp.zeros((2, 3))
    msg = raises("tripy.quantize does not support dtype int32 for argument 'dtype'", tp.quantize, x, 1.0, tp.int32)
    assert "Supported dtypes: int4, int8, float8." in msg
    raises(
        re.escape("tripy.quantize: block-wise scaling (a 2-D scale) needs dtype int4"),
        tp.quantize,
        x,
        [[1.0, 1.0, 1.0]],
        tp.int8,
    )
    raises("tripy.quantize does not support dtype int32", tp.quantize, tp.Tensor([1, 2]), 1.0, tp.int8)
    raises(
        "tripy.quantize: the scale has 2 values, but dim 1 of the input has size 3",
        tp.quantize,
        x,
        [1.0, 2.0],
        tp.int8,
        1,
    )
    raises(
        re.escape("tripy.quantize: per-tensor scaling (dim=None) needs a scalar scale, but the scale has shape [2]"),
        tp.quantize,
        x,
        [1.0, 2.0],
        tp.int8,
    )
    raises(
        "tripy.quantize: 'input' and 'scale' must have the same data type, but got float32 and float16",
        tp.quantize,
        x,
        tp.cast(tp.Tensor(1.0), tp.float16),
        tp.int8,
    )
    raises(re.escape("tripy.quantize: dim 2 is out of range for a tensor of rank 2"), tp.quantize, x, [1.0], tp.int8, 2)
    q = tp.Tensor(np.array([1, 2], np.int8))
    raises("tripy.dequantize does not support dtype int32 for argument 'dtype'", tp.dequantize, q, 1.0, tp.int32)
    raises("tripy.dequantize does not support dtype float32 for argument 'input'", tp.dequantize, x, 1.0, tp.float32)
    raises(
        "tripy.dequantize: 'dtype' and 'scale' must have the same data type, but got float16 and float32",
        tp.dequantize,
        q,
        tp.Tensor(1.0),
        tp.float16,
    )


# ---- dynamic shapes: one compiled program, several input shapes ---------------------------------------------
def test_softmax_outer_quantize_with_dynamic_shapes():
    dyn = lambda *shape: tp.InputInfo(tuple((1, s, s + 3) for s in shape), tp.float32)  # noqa: E731
    softmax = tp.compile(lambda t: (tp.softmax(t, 0), tp.softmax(t)), args=[dyn(2, 3)])
    outer = tp.compile(tp.outer, args=[dyn(3), dyn(2)])
    scale = RNG.uniform(0.01, 0.1, size=3).astype(np.float32)
    quant = tp.compile(
        lambda t: tp.quantize(t, tp.Tensor(scale), tp.int8, dim=1), args=[tp.InputInfo(((1, 2, 5), 3), tp.float32)]
    )
    for n, m in [(2, 3), (4, 1), (1, 5)]:
        x = rand(n, m)
        by_dim, overall = softmax(tp.Tensor(x))
        assert np.allclose(np.from_dlpack(by_dim), np_softmax(x, 0), rtol=1e-5, atol=1e-7)
        assert np.allclose(np.from_dlpack(overall), np_softmax(x, None), rtol=1e-5, atol=1e-7)
        a, b = rand(n), rand(m)
        assert np.allclose(np.from_dlpack(outer(tp.Tensor(a), tp.Tensor(b))), np.outer(a, b), rtol=1e-6)
        x3 = rand(n, 3)
        assert np.array_equal(np.from_dlpack(quant(tp.Tensor(x3))), np_quantize(x3, scale, tp.int8, 1))
