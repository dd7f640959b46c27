"""Pooling (tp.maxpool, tp.avgpool) and tp.resize against NumPy references written here, in eager and
compiled mode, with static and dynamic shapes."""

import itertools
import math

import numpy as np
import pytest

import tripy as tp

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32):
    return RNG.uniform(-3, 3, size=shape).astype(dtype)


def as_np(t):
    return np.from_dlpack(t)


# ---- NumPy references -----------------------------------------------------------------------------------


def pool_ref(x, kind, kernel, stride=None, padding=None, count_include_pad=True):
    m = len(kernel)
    stride = stride or (1,) * m
    padding = padding or ((0, 0),) * m
    pad = ((0, 0), (0, 0)) + tuple(padding)
    fill = -np.inf if kind == "max" else 0
    if kind == "max" and x.dtype.kind == "i":
        fill = np.iinfo(x.dtype).min
    xp = np.pad(x.astype(np.float64), pad, constant_values=fill)
    real = np.pad(np.ones(x.shape[2:]), tuple(padding))  # 1 where an input element is, 0 in padding
    out_sizes = [(xp.shape[2 + i] - kernel[i]) // stride[i] + 1 for i in range(m)]
    out = np.zeros(x.shape[:2] + tuple(out_sizes))
    for pos in itertools.product(*[range(n) for n in out_sizes]):
        window = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, stride, kernel))
        values = xp[(Ellipsis,) + window]
        if kind == "max":
            out[(Ellipsis,) + pos] = values.max(axis=tuple(range(2, 2 + m)))
        else:
            divisor = np.prod(kernel) if count_include_pad else real[window].sum()
            out[(Ellipsis,) + pos] = values.sum(axis=tuple(range(2, 2 + m))) / divisor
    return out.astype(x.dtype)


def resize_ref(x, mode, out_shape, align_corners=False):
    """PyTorch's interpolate(size=out_shape) rules, one dim at a time, in float32."""
    out = x
    for d, (n, m) in enumerate(zip(x.shape, out_shape)):
        if n == m:
            continue
        i = np.arange(m)
        if mode == "nearest":
            out = np.take(out, (i * n) // m, axis=d)
            continue
        if mode == "cubic":
            out = _cubic_ref(out, d, n, m, align_corners)
            continue
        f = np.float32
        if align_corners:
            ratio = f(n - 1) / f(m - 1) if m > 1 else f(0)
            src = i.astype(f) * ratio
        else:
            ratio = f(n) / f(m)
            src = np.maximum((i.astype(f) + f(0.5)) * ratio - f(0.5), f(0))
        lo = np.minimum(src.astype(np.int64), n - 1)
        hi = np.minimum(lo + 1, n - 1)
        w = (src - lo.astype(f)).astype(f)
        shape = [1] * x.ndim
        shape[d] = m
        w = w.reshape(shape)
        out = np.take(out, lo, axis=d).astype(f) * (f(1) - w) + np.take(out, hi, axis=d).astype(f) * w
    return out.astype(x.dtype)


def _cubic_ref(x, d, n, m, align_corners):
    """PyTorch's bicubic along dim d: Keys' weights (a = -0.75) on the 4 neighbours, indices clamped."""
    i = np.arange(m, dtype=np.float64)
    src = i * ((n - 1) / (m - 1) if m > 1 else 0.0) if align_corners else (i + 0.5) * (n / m) - 0.5
    base = np.floor(src)
    t = src - base
    a = -0.75
    near = lambda z: ((a + 2) * z - (a + 3)) * z * z + 1  # noqa: E731
    far = lambda z: ((a * z - 5 * a) * z + 8 * a) * z - 4 * a  # noqa: E731
    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    shape = [1] * x.ndim
    shape[d] = m
    out = 0
    for k, w in zip((-1, 0, 1, 2), weights):
        idx = np.clip(base.astype(np.int64) + k, 0, n - 1)
        out = out + np.take(x, idx, axis=d).astype(np.float64) * w.reshape(shape)
    return out.astype(np.float32)


def test_references_agree_with_known_pytorch_values():
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    assert resize_ref(x, "linear", (1, 1, 4, 4))[0, 0, :2].tolist() == [[0, 0.25, 0.75, 1], [0.5, 0.75, 1.25, 1.5]]
    assert resize_ref(np.arange(3, dtype=np.float32), "nearest", (5,)).tolist() == [0, 0, 1, 1, 2]
    assert resize_ref(np.arange(4, dtype=np.float32), "linear", (2,)).tolist() == [0.5, 2.5]
    # torch.nn.functional.interpolate(torch.arange(4.).reshape(1, 1, 2, 2), size=(4, 4), mode="bicubic")[0, 0, 0]
    np.testing.assert_allclose(
        resize_ref(x, "cubic", (1, 1, 4, 4))[0, 0, 0], [-0.31640625, 0.015625, 0.5625, 0.89453125], atol=1e-6
    )
    assert pool_ref(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4), "avg", (2, 2), (2, 2)).ravel().tolist() == [
        2.5,
        4.5,
        10.5,
        12.5,
    ]


# ---- pooling ---------------------------------------------------------------------------------------------

POOL_CASES = [
    ((2, 3, 6, 7), (2, 2), None, None),
    ((1, 2, 6, 7), (3, 2), (2, 3), None),
    ((1, 1, 5, 5), (3, 3), (2, 2), ((1, 1), (1, 1))),
    ((2, 1, 4, 6), (2, 3), (1, 2), ((1, 0), (0, 2))),
    ((1, 2, 4, 5, 6), (2, 2, 3), None, None),
    ((1, 1, 5, 4, 6), (3, 2, 2), (2, 1, 2), ((1, 1), (0, 1), (1, 0))),
]


@pytest.mark.parametrize("shape,kernel,stride,padding", POOL_CASES)
def test_maxpool(eager_or_compiled, shape, kernel, stride, padding):
    x = rand(*shape)
    out = eager_or_compiled(lambda t: tp.maxpool(t, kernel, stride, padding), tp.Tensor(x))
    assert np.array_equal(as_np(out), pool_ref(x, "max", kernel, stride, padding))


@pytest.mark.parametrize("shape,kernel,stride,padding", POOL_CASES)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avgpool(eager_or_compiled, shape, kernel, stride, padding, count_include_pad):
    x = rand(*shape)
    out = eager_or_compiled(lambda t: tp.avgpool(t, kernel, stride, padding, count_include_pad), tp.Tensor(x))
    np.testing.assert_allclose(
        as_np(out), pool_ref(x, "avg", kernel, stride, padding, count_include_pad), rtol=1e-5, atol=1e-6
    )


def test_maxpool_of_negative_values_ignores_padding(eager_or_compiled):
    x = -np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
    out = eager_or_compiled(lambda t: tp.maxpool(t, (2, 2), (2, 2), ((1, 1), (1, 1))), tp.Tensor(x))
    assert as_np(out)[0, 0].tolist() == [[-1, -2], [-4, -5]]


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.float16])
def test_maxpool_dtypes(eager_or_compiled, dtype):
    x = RNG.integers(-100, 100, size=(1, 2, 5, 4)).astype(dtype)
    out = eager_or_compiled(lambda t: tp.maxpool(t, (2, 2), (1, 2), ((1, 0), (0, 1))), tp.Tensor(x))
    assert out.dtype == tp.Tensor(x).dtype
    assert np.array_equal(as_np(out), pool_ref(x, "max", (2, 2), (1, 2), ((1, 0), (0, 1))))


def test_avgpool_half_precision(eager_or_compiled):
    x = rand(1, 2, 6, 6, dtype=np.float16)
    out = eager_or_compiled(lambda t: tp.avgpool(t, (3, 3), (3, 3)), tp.Tensor(x))
    np.testing.assert_allclose(
        as_np(out).astype(np.float32), pool_ref(x.astype(np.float32), "avg", (3, 3), (3, 3)), rtol=1e-2, atol=1e-2
    )


@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (1, 1, 3, 4), (3, 2, 10, 5)])
def test_pooling_with_dynamic_shapes(shape):
    kernel, stride, padding = (3, 2), (2, 2), ((1, 1), (0, 1))
    info = tp.InputInfo(((1, 2, 4), (1, 2, 4), (3, 7, 12), (2, 9, 12)), tp.float32)
    maxpool = tp.compile(lambda t: tp.maxpool(t, kernel, stride, padding), args=[info])
    avgpool = tp.compile(lambda t: tp.avgpool(t, kernel, stride, padding, count_include_pad=False), args=[info])
    x = rand(*shape)
    assert np.array_equal(as_np(maxpool(tp.Tensor(x))), pool_ref(x, "max", kernel, stride, padding))
    np.testing.assert_allclose(
        as_np(avgpool(tp.Tensor(x))), pool_ref(x, "avg", kernel, stride, padding, False), rtol=1e-5, atol=1e-6
    )


def test_pooling_errors():
    x = tp.Tensor(rand(1, 1, 4, 4))
    with pytest.raises(tp.TripyException, match="kernel_dims must have 2 or 3 entries") as e:
        tp.maxpool(x, (2,))
    assert __file__ in str(e.value)
    with pytest.raises(tp.TripyException, match=r"a 3-D kernel needs an input of rank 5"):
        tp.avgpool(x, (2, 2, 2))
    with pytest.raises(tp.TripyException, match=r"stride must be a sequence of 2 ints >= 1"):
        tp.maxpool(x, (2, 2), stride=(0, 1))
    with pytest.raises(tp.TripyException, match=r"padding .* must be smaller than the kernel size 2"):
        tp.avgpool(x, (2, 2), padding=((2, 0), (0, 0)))
    with pytest.raises(tp.TripyException, match=r"kernel size 5 of spatial dim 1 is larger than that dim"):
        tp.maxpool(x, (2, 5))
    with pytest.raises(tp.TripyException, match="tripy.avgpool does not support dtype int32"):
        tp.avgpool(tp.Tensor(np.zeros((1, 1, 4, 4), np.int32)), (2, 2))
    with pytest.raises(tp.TripyException, match=r"padding must be a sequence of 2 \(before, after\) pairs"):
        tp.maxpool(x, (2, 2), padding=((1, 1),))
    with pytest.raises(tp.TripyException, match="argument 'padding' must be a sequence of a sequence of int"):
        tp.maxpool(x, (2, 2), padding=(1, 1))


# ---- resize --------------------------------------------------------------------------------------------

RESIZE_SHAPES = [
    ((1, 1, 2, 2), (1, 1, 4, 4)),
    ((2, 3, 5, 4), (2, 3, 3, 7)),
    ((1, 2, 4, 6), (1, 2, 9, 2)),
    ((3, 5), (7, 1)),
    ((1, 1, 3, 4, 5), (1, 1, 6, 2, 5)),
    ((6,), (11,)),
    ((2, 3), (2, 3)),
    ((4, 1), (4, 5)),
]


@pytest.mark.parametrize("in_shape,out_shape", RESIZE_SHAPES)
@pytest.mark.parametrize(
    "mode,align_corners", [("nearest", False), ("linear", False), ("linear", True), ("cubic", False), ("cubic", True)]
)
def test_resize_output_shape(eager_or_compiled, in_shape, out_shape, mode, align_corners):
    x = rand(*in_shape)
    out = eager_or_compiled(
        lambda t: tp.resize(t, mode, output_shape=out_shape, align_corners=align_corners), tp.Tensor(x)
    )
    assert out.shape == out_shape
    np.testing.assert_allclose(as_np(out), resize_ref(x, mode, out_shape, align_corners), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scales", [(1, 1, 2, 2), (1, 1, 0.5, 1.5), (1, 1, 1.7, 0.8), (2, 1, 1, 3)])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_scales(eager_or_compiled, scales, mode):
    x = rand(2, 3, 5, 4)
    out = eager_or_compiled(lambda t: tp.resize(t, mode, scales=scales), tp.Tensor(x))
    out_shape = tuple(math.floor(n * s) for n, s in zip(x.shape, scales))
    assert out.shape == out_shape
    np.testing.assert_allclose(as_np(out), resize_ref(x, mode, out_shape), rtol=1e-5, atol=1e-5)


def test_resize_nvtripy_overloads(eager_or_compiled):
    """resize(input, output_shape, mode="linear", ...) and resize(input, scales, ...), as in nvtripy 0.1.7."""
    x = rand(1, 2, 3, 4)
    out = eager_or_compiled(lambda t: tp.resize(t, (1, 2, 6, 5)), tp.Tensor(x))
    np.testing.assert_allclose(as_np(out), resize_ref(x, "linear", (1, 2, 6, 5)), rtol=1e-5, atol=1e-5)
    out = eager_or_compiled(lambda t: tp.resize(t, (1.0, 1.0, 2.0, 0.5), "nearest"), tp.Tensor(x))
    np.testing.assert_allclose(as_np(out), resize_ref(x, "nearest", (1, 2, 6, 2)))
    out = eager_or_compiled(
        lambda t: tp.resize(t, output_shape=(1, 2, 5, 7), mode="cubic", align_corners=True), tp.Tensor(x)
    )
    np.testing.assert_allclose(as_np(out), resize_ref(x, "cubic", (1, 2, 5, 7), True), rtol=1e-5, atol=1e-5)
    with pytest.raises(tp.TripyException, match="the mode is given twice"):
        tp.resize(tp.Tensor(x), "nearest", "cubic", output_shape=(1, 2, 6, 5))
    with pytest.raises(tp.TripyException, match="give the output shape or the scales once"):
        tp.resize(tp.Tensor(x), (1, 2, 6, 5), scales=(1, 1, 2, 2))


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.int8])
def test_resize_nearest_keeps_integer_and_bool_dtypes(eager_or_compiled, dtype):
    x = RNG.integers(0, 2, size=(2, 3)).astype(dtype)
    out = eager_or_compiled(lambda t: tp.resize(t, "nearest", output_shape=(5, 4)), tp.Tensor(x))
    assert np.array_equal(as_np(out), resize_ref(x, "nearest", (5, 4)))


def test_resize_linear_half_precision(eager_or_compiled):
    x = rand(1, 1, 3, 5, dtype=np.float16)
    out = eager_or_compiled(lambda t: tp.resize(t, "linear", output_shape=(1, 1, 6, 3)), tp.Tensor(x))
    assert out.dtype == tp.float16
    np.testing.assert_allclose(
        as_np(out).astype(np.float32), resize_ref(x.astype(np.float32), "linear", (1, 1, 6, 3)), rtol=1e-2, atol=1e-2
    )


@pytest.mark.parametrize(
    "mode,align_corners", [("nearest", False), ("linear", False), ("linear", True), ("cubic", False), ("cubic", True)]
)
def test_resize_with_dynamic_shapes(mode, align_corners):
    info = tp.InputInfo(((1, 1, 3), (1, 2, 3), (1, 3, 8), (1, 4, 8)), tp.float32)

    def by_shape(t):  # output size from the input's (run-time) size
        return tp.resize(t, mode, output_shape=(t.shape[0], t.shape[1], t.shape[2] * 2, 5), align_corners=align_corners)

    def by_scales(t):
        return tp.resize(t, mode, scales=(1, 1, 1.5, 2), align_corners=align_corners)

    shaped, scaled = tp.compile(by_shape, args=[info]), tp.compile(by_scales, args=[info])
    for in_shape in [(1, 2, 3, 4), (2, 1, 6, 2), (1, 1, 1, 1)]:  # one executable each runs every shape
        x = rand(*in_shape)
        out = shaped(tp.Tensor(x))
        expected_shape = in_shape[:2] + (in_shape[2] * 2, 5)
        np.testing.assert_allclose(as_np(out), resize_ref(x, mode, expected_shape, align_corners), rtol=1e-5, atol=1e-5)
        out = scaled(tp.Tensor(x))
        expected_shape = in_shape[:2] + (int(in_shape[2] * 1.5), in_shape[3] * 2)
        assert out.shape == expected_shape
        np.testing.assert_allclose(as_np(out), resize_ref(x, mode, expected_shape, align_corners), rtol=1e-5, atol=1e-5)


def test_resize_errors():
    x = tp.Tensor(rand(1, 1, 2, 2))
    with pytest.raises(tp.TripyException, match="unsupported mode 'bicubic'") as e:
        tp.resize(x, "bicubic", output_shape=(1, 1, 4, 4))
    assert __file__ in str(e.value)
    with pytest.raises(tp.TripyException, match="align_corners can only be used with mode='linear' or 'cubic'"):
        tp.resize(x, "nearest", output_shape=(1, 1, 4, 4), align_corners=True)
    with pytest.raises(tp.TripyException, match="give exactly one of output_shape and scales"):
        tp.resize(x, "nearest")
    with pytest.raises(tp.TripyException, match="give exactly one of output_shape and scales"):
        tp.resize(x, "nearest", output_shape=(1, 1, 4, 4), scales=(1, 1, 2, 2))
    with pytest.raises(tp.TripyException, match=r"output_shape \[4, 4\] must have one entry per dim"):
        tp.resize(x, "nearest", output_shape=(4, 4))
    with pytest.raises(tp.TripyException, match="scales must be a sequence of positive numbers"):
        tp.resize(x, "linear", scales=(1, 1, 0, 2))
    with pytest.raises(tp.TripyException, match="tripy.resize does not support dtype int32"):
        tp.resize(tp.Tensor(np.zeros((2, 2), np.int32)), "linear", output_shape=(4, 4))
    with pytest.raises(tp.TripyException, match="cannot resize the empty dim 0"):
        tp.resize(tp.Tensor(np.zeros((0, 2), np.float32)), "nearest", output_shape=(3, 2))
