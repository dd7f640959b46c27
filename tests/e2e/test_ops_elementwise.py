"""End-to-end checks of the activations, logical/bitwise operators, where, masked_fill, tril and triu
against NumPy, in eager and compiled mode."""

import math
import re

import numpy as np
import pytest

import tripy as tp

RNG = np.random.default_rng(1)


def rand(*shape, dtype=np.float32, low=-3.0, high=3.0):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def as_numpy(t):
    return np.asarray(t).astype(np.float32) if t.dtype == tp.bfloat16 else np.from_dlpack(t)


def raises(match, fn, *args):
    """The call raises a TripyException matching `match` whose report points at this file."""
    with pytest.raises(tp.TripyException, match=match) as info:
        fn(*args)
    assert __file__ in str(info.value)
    return str(info.value)


# ---- activations -------------------------------------------------------------------------------------
def np_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACTIVATIONS = [
    ("relu", lambda x: np.maximum(x, 0)),
    ("gelu", lambda x: 0.5 * x * (1 + np_erf(x / np.sqrt(2)))),
    ("silu", lambda x: x * np_sigmoid(x)),
    ("sigmoid", np_sigmoid),
]


@pytest.mark.parametrize("name,ref", ACTIVATIONS)
@pytest.mark.parametrize("shape", [(2, 3, 4), (), (0, 3)])
def test_activations(eager_or_compiled, name, ref, shape):
    x = rand(*shape)
    out = eager_or_compiled(getattr(tp, name), tp.Tensor(x))
    assert out.dtype == tp.float32 and tuple(out.shape) == shape
    assert np.allclose(np.from_dlpack(out), ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,ref", ACTIVATIONS)
@pytest.mark.parametrize("dtype", [tp.float16, tp.bfloat16])
def test_activations_half_precision(eager_or_compiled, name, ref, dtype):
    x = rand(8)
    out = eager_or_compiled(getattr(tp, name), tp.cast(tp.Tensor(x), dtype))
    assert out.dtype == dtype
    assert np.allclose(as_numpy(out), ref(x.astype(np.float64)), rtol=2e-2, atol=2e-2)


def test_gelu_is_the_exact_erf_form():
    # The tanh approximation and the exact (erf) form differ by about 1.6e-4 at x = -1.5: make sure we are the latter.
    x = np.linspace(-4, 4, 81).astype(np.float32)
    out = np.from_dlpack(tp.gelu(tp.Tensor(x)))
    assert np.allclose(out, ACTIVATIONS[1][1](x.astype(np.float64)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_relu_int(eager_or_compiled, dtype):
    x = np.array([[-3, 0, 4], [7, -1, 2]], dtype=dtype)
    out = eager_or_compiled(tp.relu, tp.Tensor(x))
    assert out.dtype == tp.Tensor(x).dtype
    assert np.array_equal(np.from_dlpack(out), np.maximum(x, 0))


def test_activations_special_values(eager_or_compiled):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 100.0, -100.0], np.float32)
    relu = eager_or_compiled(tp.relu, tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(relu), np.array([np.nan, np.inf, 0, 0, 0, 100, 0], np.float32), equal_nan=True)
    silu = np.from_dlpack(eager_or_compiled(tp.silu, tp.Tensor(x)))
    assert np.isnan(silu[0]) and silu[1] == np.inf and silu[5] == 100.0 and abs(silu[6]) < 1e-30
    gelu = np.from_dlpack(eager_or_compiled(tp.gelu, tp.Tensor(x)))
    assert np.isnan(gelu[0]) and gelu[1] == np.inf and gelu[5] == 100.0 and gelu[6] == 0.0


@pytest.mark.parametrize("name", ["gelu", "silu", "sigmoid"])
def test_float_activations_reject_ints(name):
    raises(re.escape(f"tripy.{name} does not support dtype int32"), getattr(tp, name), tp.Tensor([1, 2]))


def test_relu_rejects_bool():
    raises("tripy.relu does not support dtype bool", tp.relu, tp.Tensor([True]))


# ---- ~ & | ^ ----------------------------------------------------------------------------------------------
def test_invert_bool(eager_or_compiled):
    x = np.array([[True, False], [False, True]])
    out = eager_or_compiled(lambda t: ~t, tp.Tensor(x))
    assert out.dtype == tp.bool and np.array_equal(np.from_dlpack(out), ~x)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_invert_int_is_bitwise(eager_or_compiled, dtype):
    x = np.array([0, 1, -1, 5, -128, 127], dtype=dtype)
    out = eager_or_compiled(lambda t: ~t, tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), ~x)


def test_invert_rank0_and_empty(eager_or_compiled):
    assert eager_or_compiled(lambda t: ~t, tp.Tensor(True)).tolist() is False
    out = eager_or_compiled(lambda t: ~t, tp.Tensor(np.zeros((0, 2), bool)))
    assert tuple(out.shape) == (0, 2)


def test_invert_rejects_float():
    raises("'~' does not support dtype float32", lambda t: ~t, tp.Tensor([1.0]))


LOGICAL = [
    (lambda a, b: a & b, np.logical_and),
    (lambda a, b: a | b, np.logical_or),
    (lambda a, b: a ^ b, np.logical_xor),
]


@pytest.mark.parametrize("fn,ref", LOGICAL)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 3)), ((), (2,)), ((0, 2), (2,))])
def test_logical_bool(eager_or_compiled, fn, ref, shapes):
    a = RNG.integers(0, 2, size=shapes[0]).astype(bool)
    b = RNG.integers(0, 2, size=shapes[1]).astype(bool)
    out = eager_or_compiled(fn, tp.Tensor(a), tp.Tensor(b))
    assert out.dtype == tp.bool
    assert np.array_equal(np.from_dlpack(out), ref(a, b))


@pytest.mark.parametrize(
    "fn,ref",
    [(lambda a, b: a & b, np.bitwise_and), (lambda a, b: a | b, np.bitwise_or), (lambda a, b: a ^ b, np.bitwise_xor)],
)
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_bitwise_int(eager_or_compiled, fn, ref, dtype):
    a = np.array([[0, 1, 6, -1], [12, -8, 5, 127]], dtype=dtype)
    b = np.array([3, -1, 10, 4], dtype=dtype)
    out = eager_or_compiled(fn, tp.Tensor(a), tp.Tensor(b))
    assert np.array_equal(np.from_dlpack(out), ref(a, b))


def test_logical_with_python_scalars_either_side(eager_or_compiled):
    a = np.array([True, False])
    assert eager_or_compiled(lambda t: t & True, tp.Tensor(a)).tolist() == [True, False]
    assert eager_or_compiled(lambda t: False | t, tp.Tensor(a)).tolist() == [True, False]
    assert eager_or_compiled(lambda t: True ^ t, tp.Tensor(a)).tolist() == [False, True]
    assert eager_or_compiled(lambda t: 6 & t, tp.Tensor(np.array([3, 4], np.int32))).tolist() == [2, 4]


def test_logical_errors():
    raises("'&' does not support dtype float32", lambda: tp.Tensor([1.0]) & tp.Tensor([1.0]))
    raises(
        re.escape("Operands of '|' must have the same data type, but got bool and int32"),
        lambda: tp.Tensor([True]) | tp.Tensor([1]),
    )
    raises(
        re.escape("Shapes of the operands of '^' are not compatible for broadcasting: [2] and [3]"),
        lambda: tp.Tensor([True, False]) ^ tp.Tensor([True, False, True]),
    )
    raises("Cannot combine a bool tensor with the Python number 1", lambda: tp.Tensor([True]) & 1)


# ---- where / masked_fill -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shapes",
    [
        ((2, 3), (2, 3), (2, 3)),
        ((2, 3), (3,), (2, 1)),
        ((3,), (2, 3), ()),
        ((2, 1, 3), (4, 1), (3,)),
        ((), (), ()),
        ((0, 3), (3,), (1, 3)),
    ],
)
def test_where_broadcasting(eager_or_compiled, shapes):
    cond = RNG.integers(0, 2, size=shapes[0]).astype(bool)
    a, b = rand(*shapes[1]), rand(*shapes[2])
    out = eager_or_compiled(tp.where, tp.Tensor(cond), tp.Tensor(a), tp.Tensor(b))
    expected = np.where(cond, a, b)
    assert tuple(out.shape) == expected.shape
    assert np.array_equal(np.from_dlpack(out), expected)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.bool_, np.float16])
def test_where_dtypes(eager_or_compiled, dtype):
    cond = np.array([True, False, True])
    a, b = np.array([1, 0, 1]).astype(dtype), np.array([0, 1, 1]).astype(dtype)
    out = eager_or_compiled(tp.where, tp.Tensor(cond), tp.Tensor(a), tp.Tensor(b))
    assert np.array_equal(np.from_dlpack(out), np.where(cond, a, b))


def test_where_python_scalars(eager_or_compiled):
    x = rand(2, 3)
    out = eager_or_compiled(lambda t: tp.where(t > 0, t, 0.0), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), np.where(x > 0, x, 0).astype(np.float32))
    out = eager_or_compiled(lambda t: tp.where(t > 0, -1.0, t), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), np.where(x > 0, -1, x).astype(np.float32))


def test_where_errors():
    x = tp.Tensor([1.0, 2.0])
    raises("tripy.where does not support dtype float32 for argument 'condition'", tp.where, x, x, x)
    raises("tripy.where: argument 'condition' must be tripy.Tensor, but got list", tp.where, [True, False], x, x)
    raises(
        "tripy.where: 'input' and 'other' must have the same data type, but got float32 and int32",
        tp.where,
        x > 0,
        x,
        tp.Tensor([1, 2]),
    )
    msg = raises(
        "tripy.where: shapes of condition, input and other are not compatible for broadcasting",
        tp.where,
        tp.Tensor([True, False, True]),
        x,
        x,
    )
    assert "[3], [2] and [2]" in msg
    raises("tripy.where needs at least one tripy.Tensor operand", tp.where, x > 0, 1.0, 2.0)


@pytest.mark.parametrize(
    "shape,mask_shape",
    [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), (2, 1)), ((4, 2, 3), (1, 3)), ((), ()), ((0, 3), (3,))],
)
def test_masked_fill(eager_or_compiled, shape, mask_shape):
    x = rand(*shape)
    mask = RNG.integers(0, 2, size=mask_shape).astype(bool)
    out = eager_or_compiled(lambda t, m: tp.masked_fill(t, m, -7.5), tp.Tensor(x), tp.Tensor(mask))
    assert tuple(out.shape) == shape
    assert np.array_equal(np.from_dlpack(out), np.where(mask, np.float32(-7.5), x))


def test_masked_fill_values(eager_or_compiled):
    x = np.array([[1, 2], [3, 4]], np.int32)
    mask = np.array([[True, False], [False, True]])
    out = eager_or_compiled(lambda t, m: tp.masked_fill(t, m, 9), tp.Tensor(x), tp.Tensor(mask))
    assert out.dtype == tp.int32 and out.tolist() == [[9, 2], [3, 9]]
    f = rand(2, 2)
    out = eager_or_compiled(lambda t, m: tp.masked_fill(t, m, float("-inf")), tp.Tensor(f), tp.Tensor(mask))
    assert np.array_equal(np.from_dlpack(out), np.where(mask, -np.inf, f).astype(np.float32))
    out = eager_or_compiled(lambda t, m: tp.masked_fill(t, m, tp.Tensor(2.5)), tp.Tensor(f), tp.Tensor(mask))
    assert np.array_equal(np.from_dlpack(out), np.where(mask, 2.5, f).astype(np.float32))


def test_masked_fill_errors():
    x = tp.zeros((2, 3))
    raises("tripy.masked_fill does not support dtype float32 for argument 'mask'", tp.masked_fill, x, x, 1.0)
    raises(
        re.escape(
            "tripy.masked_fill: the mask (shape [2, 2, 3]) does not broadcast to the shape of the input ([2, 3])"
        ),
        tp.masked_fill,
        x,
        tp.Tensor(np.ones((2, 2, 3), bool)),
        1.0,
    )
    raises(re.escape("the mask (shape [2]) does not broadcast"), tp.masked_fill, x, tp.Tensor([True, False]), 1.0)
    raises("cannot fill a int32 tensor with -inf", tp.masked_fill, tp.Tensor([1]), tp.Tensor([True]), float("-inf"))
    raises("value must be a number or a rank-0 tensor", tp.masked_fill, x, x > 0, "a")
    raises("value must be a number or a rank-0 tensor", tp.masked_fill, x, x > 0, tp.Tensor([1.0]))


# ---- tril / triu ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,ref", [("tril", np.tril), ("triu", np.triu)])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 2), (2, 3, 4, 4), (0, 3), (3, 0)])
@pytest.mark.parametrize("diagonal", [0, 1, -1, 3, -7])
def test_tril_triu(eager_or_compiled, name, ref, shape, diagonal):
    x = rand(*shape)
    out = eager_or_compiled(lambda t: getattr(tp, name)(t, diagonal), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), ref(x, diagonal))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_, np.float16])
def test_tril_triu_dtypes(eager_or_compiled, dtype):
    x = np.ones((3, 3)).astype(dtype)
    assert np.array_equal(np.from_dlpack(eager_or_compiled(tp.tril, tp.Tensor(x))), np.tril(x))
    assert np.array_equal(np.from_dlpack(eager_or_compiled(tp.triu, tp.Tensor(x))), np.triu(x))


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_tril_triu_errors(name):
    fn = getattr(tp, name)
    raises(f"tripy.{name}: the input must have at least 2 dims, but it has rank 1", fn, tp.Tensor([1.0, 2.0]))
    raises(f"tripy.{name}: the input must have at least 2 dims, but it has rank 0", fn, tp.Tensor(1.0))
    raises(f"tripy.{name}: argument 'diagonal' must be int, but got float", fn, tp.zeros((2, 2)), 1.5)


# ---- dynamic shapes: one compiled program, several input shapes ---------------------------------------------
def test_where_masked_fill_tril_with_dynamic_shapes():
    dyn = lambda *shape: tuple((1, s, s + 3) for s in shape)  # noqa: E731
    # A dim that broadcasts is declared as a static 1 (two dynamic dims are taken to be equal).
    where = tp.compile(
        lambda c, a, b: tp.where(c, a, b),
        args=[
            tp.InputInfo(dyn(2, 3), tp.bool),
            tp.InputInfo(dyn(3), tp.float32),
            tp.InputInfo(dyn(2) + (1,), tp.float32),
        ],
    )
    fill = tp.compile(
        lambda a, m: tp.masked_fill(a, m, -1.0),
        args=[tp.InputInfo(dyn(2, 3), tp.float32), tp.InputInfo(dyn(3), tp.bool)],
    )
    tril = tp.compile(lambda a: tp.tril(a, 1), args=[tp.InputInfo(dyn(2, 3, 3), tp.float32)])
    for n, m in [(2, 3), (4, 1), (1, 5)]:
        cond, a, b = RNG.integers(0, 2, size=(n, m)).astype(bool), rand(m), rand(n, 1)
        assert np.array_equal(np.from_dlpack(where(tp.Tensor(cond), tp.Tensor(a), tp.Tensor(b))), np.where(cond, a, b))
        x, mask = rand(n, m), RNG.integers(0, 2, size=(m,)).astype(bool)
        assert np.array_equal(np.from_dlpack(fill(tp.Tensor(x), tp.Tensor(mask))), np.where(mask, np.float32(-1), x))
        y = rand(2, n, m)
        assert np.array_equal(np.from_dlpack(tril(tp.Tensor(y))), np.tril(y, 1))
