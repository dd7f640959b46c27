"""End-to-end checks of the first op set against NumPy, in eager and compiled mode."""

import numpy as np
import pytest

import tripy as tp

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape).astype(dtype)


@pytest.mark.parametrize(
    "name,ref,low",
    [
        ("tanh", np.tanh, -2),
        ("exp", np.exp, -2),
        ("log", np.log, 0.1),
        ("sqrt", np.sqrt, 0.1),
        ("rsqrt", lambda x: 1 / np.sqrt(x), 0.1),
        ("abs", np.abs, -2),
        ("sin", np.sin, -2),
        ("cos", np.cos, -2),
    ],
)
def test_unary(eager_or_compiled, name, ref, low):
    x = rand(3, 4, low=low)
    out = eager_or_compiled(getattr(tp, name), tp.Tensor(x))
    assert np.allclose(np.from_dlpack(out), ref(x), rtol=1e-5, atol=1e-6)


def test_neg(eager_or_compiled):
    x = rand(5)
    assert np.array_equal(np.from_dlpack(eager_or_compiled(lambda a: -a, tp.Tensor(x))), -x)


BINARY = [
    (lambda a, b: a + b, np.add),
    (lambda a, b: a - b, np.subtract),
    (lambda a, b: a * b, np.multiply),
    (lambda a, b: a / b, np.divide),
    (lambda a, b: a // b, np.floor_divide),
    (lambda a, b: a % b, np.mod),
    (lambda a, b: a**b, np.power),
    (tp.maximum, np.maximum),
    (tp.minimum, np.minimum),
]


@pytest.mark.parametrize("fn,ref", BINARY)
@pytest.mark.parametrize(
    "shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((), (2, 2)), ((1,), (3, 1))]
)
def test_binary_broadcasting_float(eager_or_compiled, fn, ref, shapes):
    a = rand(*shapes[0], low=0.5, high=3.0)
    b = rand(*shapes[1], low=0.5, high=3.0)
    out = eager_or_compiled(fn, tp.Tensor(a), tp.Tensor(b))
    assert np.allclose(np.from_dlpack(out), ref(a, b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "fn,ref",
    [
        (lambda a, b: a // b, np.floor_divide),
        (lambda a, b: a % b, np.mod),
        (lambda a, b: a + b, np.add),
        (lambda a, b: a * b, np.multiply),
        (tp.maximum, np.maximum),
        (lambda a, b: a - b, np.subtract),
    ],
)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_binary_int_python_semantics(eager_or_compiled, fn, ref, dtype):
    a = np.array([[7, -7, 6, -6], [1, 0, -1, 5]], dtype=dtype)
    b = np.array([3, 3, -4, -4], dtype=dtype)
    out = eager_or_compiled(fn, tp.Tensor(a), tp.Tensor(b))
    assert np.array_equal(np.from_dlpack(out), ref(a, b))


def test_true_divide_of_ints_gives_float():
    out = tp.Tensor([1, 2, 3]) / tp.Tensor([2, 2, 2])
    assert out.dtype == tp.float32 and out.tolist() == [0.5, 1.0, 1.5]


@pytest.mark.parametrize(
    "expr,ref",
    [
        (lambda a: a + 2, lambda a: a + 2),
        (lambda a: 2 - a, lambda a: 2 - a),
        (lambda a: 3 * a, lambda a: 3 * a),
        (lambda a: 1 / a, lambda a: 1 / a),
        (lambda a: a**2, lambda a: a**2),
        (lambda a: 2**a, lambda a: 2**a),
        (lambda a: 5 // a, lambda a: 5 // a),
        (lambda a: a % 0.75, lambda a: a % 0.75),
    ],
)
def test_python_scalars_either_side(eager_or_compiled, expr, ref):
    a = rand(3, low=0.5, high=2.0)
    assert np.allclose(np.from_dlpack(eager_or_compiled(expr, tp.Tensor(a))), ref(a).astype(np.float32), rtol=1e-5)


@pytest.mark.parametrize(
    "fn,ref",
    [
        (lambda a, b: a == b, np.equal),
        (lambda a, b: a != b, np.not_equal),
        (lambda a, b: a < b, np.less),
        (lambda a, b: a <= b, np.less_equal),
        (lambda a, b: a > b, np.greater),
        (lambda a, b: a >= b, np.greater_equal),
    ],
)
def test_comparisons(eager_or_compiled, fn, ref):
    a = np.array([[1, 2, 3], [3, 2, 1]], dtype=np.int32)
    b = np.array([2, 2, 2], dtype=np.int32)
    out = eager_or_compiled(fn, tp.Tensor(a), tp.Tensor(b))
    assert out.dtype == tp.bool
    assert np.array_equal(np.from_dlpack(out), ref(a, b))


@pytest.mark.parametrize(
    "src,dst",
    [
        (np.float32, tp.int32),
        (np.int32, tp.float32),
        (np.float32, tp.float16),
        (np.float32, tp.bool),
        (np.int32, tp.int8),
        (np.float32, tp.bfloat16),
        (np.int32, tp.int64),
    ],
)
def test_cast(eager_or_compiled, src, dst):
    x = np.array([[0, 1.7, -2.5], [3, -0.0, 100]]).astype(src)
    out = eager_or_compiled(lambda t: tp.cast(t, dst), tp.Tensor(x))
    assert out.dtype == dst
    expected = x.astype(dst.numpy_dtype)
    # NumPy's DLPack import has no bfloat16: read such tensors through the array protocol.
    got = np.asarray(out) if dst == tp.bfloat16 else np.from_dlpack(out)
    assert np.array_equal(got.astype(np.float32), expected.astype(np.float32))


def _float8_edges():
    """Every finite float8 (e4m3fn) value, each midpoint between neighbours (ties round to even), the float32s
    just either side of each midpoint, and a spread of magnitudes from 1e-4 to 448, all as float32."""
    import ml_dtypes

    grid = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    grid = np.unique(grid[np.isfinite(grid)])
    mid = (grid[1:] + grid[:-1]) / 2
    spread = rand(500, low=-1, high=1) * np.float32(10) ** RNG.integers(-4, 3, 500).astype(np.float32)
    values = np.concatenate([grid, mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf), spread])
    return np.clip(values, -448, 448).astype(np.float32)


@pytest.mark.parametrize("src", [tp.float32, tp.float16, tp.bfloat16])
def test_cast_to_float8_rounds_once_to_the_nearest(eager_or_compiled, src):
    # jaxlib 0.6.2's XLA converts float32 to float8 through float16, rounding twice (-42.01 -> -42 -> -40).
    x = _float8_edges().astype(src.numpy_dtype)
    out = eager_or_compiled(lambda t: tp.cast(t, tp.float8), tp.Tensor(x))
    expected = x.astype(tp.float8.numpy_dtype)
    assert out.dtype == tp.float8
    assert np.array_equal(np.asarray(out).view(np.uint8), expected.view(np.uint8))


def test_cast_to_float8_over_a_range_of_shapes():
    x = RNG.choice(_float8_edges(), 240, replace=False).reshape(20, 12)
    fn = tp.compile(lambda t: tp.cast(t, tp.float8), args=[tp.InputInfo(((1, 10, 20), 12), tp.float32)])
    for rows in (1, 7, 20):
        out = np.asarray(fn(tp.Tensor(x[:rows])))
        assert np.array_equal(out.view(np.uint8), x[:rows].astype(tp.float8.numpy_dtype).view(np.uint8))


@pytest.mark.parametrize("dst", [tp.float32, tp.float16, tp.bfloat16])
def test_cast_from_bool_times_nan_and_inf_is_nan_where_false(eager_or_compiled, dst):
    # XLA rewrites convert(pred) * y to select(pred, y, 0); NumPy's 0.0 * nan and 0.0 * inf are nan.
    mask = np.array([[True, False, True], [False, False, True]])
    wide = mask.astype(np.float32)
    for scale in (float("nan"), float("inf")):
        out = eager_or_compiled(lambda m: scale * tp.cast(m, dst), tp.Tensor(mask))
        with np.errstate(invalid="ignore"):
            expected = np.float32(scale) * wide
        assert np.array_equal(np.asarray(out).astype(np.float32), expected, equal_nan=True)


@pytest.mark.parametrize(
    "shape,new", [((2, 3), (3, 2)), ((2, 3), (-1,)), ((2, 3, 4), (4, -1)), ((6,), (1, 2, 3, 1)), ((1,), ())]
)
def test_reshape(eager_or_compiled, shape, new):
    x = rand(*shape)
    out = eager_or_compiled(lambda t: tp.reshape(t, new), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), x.reshape(new))


@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (-1, 0, 1)])
def test_permute_and_transpose(eager_or_compiled, perm):
    x = rand(2, 3, 4)
    out = eager_or_compiled(lambda t: t.permute(perm), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), np.transpose(x, perm))
    out = eager_or_compiled(lambda t: tp.transpose(t, 0, -1), tp.Tensor(x))
    assert np.array_equal(np.from_dlpack(out), np.swapaxes(x, 0, -1))


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((2, 3), (3, 4)),
        ((3,), (3, 4)),
        ((2, 3), (3,)),
        ((3,), (3,)),
        ((5, 2, 3), (3, 4)),
        ((5, 2, 3), (5, 3, 4)),
        ((2, 1, 2, 3), (4, 3, 2)),
    ],
)
def test_matmul(eager_or_compiled, sa, sb):
    a, b = rand(*sa), rand(*sb)
    out = eager_or_compiled(lambda x, y: x @ y, tp.Tensor(a), tp.Tensor(b))
    assert np.allclose(np.from_dlpack(out), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,ref", [("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min)])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(eager_or_compiled, name, ref, dim, keepdim):
    x = rand(2, 3, 4)
    out = eager_or_compiled(lambda t: getattr(tp, name)(t, dim=dim, keepdim=keepdim), tp.Tensor(x))
    assert np.allclose(np.from_dlpack(out), ref(x, axis=dim, keepdims=keepdim), rtol=1e-5, atol=1e-6)


def test_creation_ops():
    assert np.array_equal(np.from_dlpack(tp.full((2, 3), 0.5)), np.full((2, 3), 0.5, np.float32))
    assert tp.ones((2,), dtype=tp.int32).tolist() == [1, 1]
    assert tp.zeros((1, 2)).tolist() == [[0.0, 0.0]]
    base = tp.Tensor([[1, 2], [3, 4]])
    assert tp.ones_like(base).tolist() == [[1, 1], [1, 1]] and tp.ones_like(base).dtype == tp.int32
    assert tp.zeros_like(base, dtype=tp.float32).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert tp.full_like(base, 9).tolist() == [[9, 9], [9, 9]]
    assert np.array_equal(np.from_dlpack(tp.iota((2, 3), dim=0)), np.broadcast_to(np.arange(2.0)[:, None], (2, 3)))
    assert tp.iota_like(tp.zeros((2, 2)), dim=1).tolist() == [[0.0, 1.0], [0.0, 1.0]]
    assert tp.arange(5, dtype=tp.int32).tolist() == list(range(5))
    assert np.allclose(np.from_dlpack(tp.arange(1.0, 3.0, 0.5)), np.arange(1.0, 3.0, 0.5))
    assert tp.arange(10, 0, -3, dtype=tp.int32).tolist() == [10, 7, 4, 1]
    assert tp.arange(0).shape == (0,)


@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.bfloat16, tp.int8, tp.int32, tp.int64, tp.bool])
def test_dtypes_round_trip(dtype):
    values = [[1, 0], [1, 1]]
    t = tp.Tensor(np.array(values).astype(dtype.numpy_dtype))
    assert t.dtype == dtype
    assert np.array_equal(np.asarray(t).astype(np.float32), np.array(values, np.float32))
    out = tp.full((2,), 1, dtype=dtype)
    assert out.dtype == dtype and [float(v) for v in out.tolist()] == [1.0, 1.0]


def test_arange_with_run_time_bounds():
    exe = tp.compile(
        lambda x: tp.arange(1, x.shape[0], 2, dtype=tp.int32), args=[tp.InputInfo(((1, 3, 8),), tp.float32)]
    )
    for n in (1, 2, 6, 7, 8):
        assert exe(tp.ones((n,))).tolist() == list(range(1, n, 2))
    exe = tp.compile(lambda x: tp.arange(x.shape[0]) * 0.5, args=[tp.InputInfo(((1, 3, 8),), tp.float32)])
    assert exe(tp.ones((4,))).tolist() == [0.0, 0.5, 1.0, 1.5]
    assert tp.arange(tp.ones((3, 2)).shape[1], dtype=tp.int32).tolist() == [0, 1]
