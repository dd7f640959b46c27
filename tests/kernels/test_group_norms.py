"""tripy-kernels' GroupNorm handler against NumPy (float64): the custom call alone (batches, 1 to 3 spatial dims,
one channel a group to one group, with and without the SiLU, values far from zero), its checks of what it is given,
and tp.GroupNorm after tp.Conv end to end in eager and compiled mode (one program, and a batch range's buckets),
where the ``group-norms`` pass makes the call."""

import numpy as np
import pytest

pytest.importorskip("tripy_kernels")

import tripy as tp  # noqa: E402
from tripy_backend import _xla, kernels  # noqa: E402


@pytest.fixture(autouse=True)
def registered():
    assert kernels.installed() is not None and kernels.has(kernels.GROUP_NORM)


def program(shape, groups, silu, scale_size=None, dtype="f32") -> bytes:
    """One call of the handler on `shape`; its arguments: x, gamma, beta, then what divides the mean's sum, the
    variance's, and eps (float32 scalars)."""
    t = "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"
    v, s = f"tensor<{scale_size or shape[-1]}xf32>", "tensor<f32>"
    config = f"groups = {groups} : i64, silu = {int(silu)} : i64"
    return f"""func.func @main(%x: {t}, %g: {v}, %b: {v}, %k1: {s}, %k2: {s}, %eps: {s}) -> {t} {{
  %0 = stablehlo.custom_call @tripy_group_norm_f32(%x, %g, %b, %k1, %k2, %eps) {{api_version = 4 : i32, backend_config = {{{config}}}}} : ({t}, {v}, {v}, {s}, {s}, {s}) -> {t}
  return %0 : {t}
}}""".encode()


def run(module: bytes, *arrays: np.ndarray) -> np.ndarray:
    exe = _xla.compile(module, "cpu", 0)
    return np.asarray(_xla.execute(exe, [_xla.to_device(np.asarray(a), "cpu", 0) for a in arrays])[0])


def scalars(shape, groups, k1=None, k2=None, eps=1e-5):
    """The divisors (default: how many values a group has) and eps, as float32 scalars."""
    n = shape[-1] // groups * int(np.prod(shape[1:-1]))
    return [np.float32(n if k is None else k) for k in (k1, k2, eps)]


def numpy_group_norm(x, gamma, beta, groups, silu, channels_last=True, ddof=0):
    """GroupNorm (eps 1e-5) of `x` ([N, *spatial, C], or [N, C, *spatial]) in float64, then the SiLU where `silu`;
    `ddof`: the variance's divisor is the count minus it."""
    x = x.astype(np.float64)
    if not channels_last:
        x = np.moveaxis(x, 1, -1)
    n, c = x.shape[0], x.shape[-1]
    g = x.reshape(n, -1, groups, c // groups)
    mean, var = g.mean(axis=(1, 3), keepdims=True), g.var(axis=(1, 3), keepdims=True, ddof=ddof)
    y = ((g - mean) / np.sqrt(var + 1e-5)).reshape(x.shape) * gamma + beta
    y = y / (1 + np.exp(-y)) if silu else y
    return y if channels_last else np.moveaxis(y, -1, 1)


@pytest.mark.parametrize(
    "shape, groups",
    [((1, 128, 128, 32), 8), ((2, 5, 7, 12), 3), ((3, 9, 6), 2), ((1, 3, 4, 5, 8), 8), ((2, 6, 6, 4), 1)],
    ids=["unet-128", "batch-2", "1d", "3d", "one-group"],
)
@pytest.mark.parametrize("silu", [True, False], ids=["silu", "plain"])
def test_same_numbers_as_numpy(shape, groups, silu):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    gamma, beta = (rng.standard_normal(shape[-1]).astype(np.float32) for _ in range(2))
    expected = numpy_group_norm(x, gamma, beta, groups, silu)
    got = run(program(shape, groups, silu), x, gamma, beta, *scalars(shape, groups))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_the_divisors_are_the_programs():
    # an unbiased variance (divided by the count minus one): the handler divides by what the program says
    rng = np.random.default_rng(4)
    x, gamma, beta = (
        rng.standard_normal((2, 3, 5, 8)).astype(np.float32),
        np.ones(8, np.float32),
        np.zeros(8, np.float32),
    )
    got = run(program(x.shape, 2, False), x, gamma, beta, *scalars(x.shape, 2, k2=59))
    np.testing.assert_allclose(got, numpy_group_norm(x, gamma, beta, 2, False, ddof=1), rtol=1e-5, atol=1e-5)


def test_values_far_from_zero_keep_their_variance():
    # a mean 1e4 times the spread: the moments are taken around each chunk's mean, not from sums of squares
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((1, 64, 64, 16)) + 1e4).astype(np.float32)
    gamma, beta = np.ones(16, np.float32), np.zeros(16, np.float32)
    expected = numpy_group_norm(x, gamma, beta, 4, False)
    got = run(program(x.shape, 4, False), x, gamma, beta, *scalars(x.shape, 4))
    np.testing.assert_allclose(got, expected, atol=2e-3)


@pytest.mark.parametrize(
    "groups, scale_size, dtype, message",
    [
        (5, None, "f32", "groups must divide C"),
        (4, 8, "f32", "gamma and beta be \\[C\\]"),
        (4, None, "f16", "operands must be float32"),
    ],
)
def test_what_it_cannot_run_fails_the_call_with_a_message(groups, scale_size, dtype, message):
    x = np.ones((1, 4, 4, 16), np.float16 if dtype == "f16" else np.float32)
    v = np.ones(scale_size or 16, np.float32)
    with pytest.raises(Exception, match=message):
        run(program(x.shape, groups, False, scale_size, dtype), x, v, v, *scalars(x.shape, 4))


def _conv_norm(cin, cout, groups, rng):
    conv, norm = tp.Conv(cin, cout, (3, 3), padding=((1, 1), (1, 1))), tp.GroupNorm(groups, cout)
    w, b = rng.standard_normal((cout, cin, 3, 3)).astype(np.float32), rng.standard_normal(cout).astype(np.float32)
    gamma, beta = rng.standard_normal(cout).astype(np.float32), rng.standard_normal(cout).astype(np.float32)
    conv.load_state_dict({"weight": tp.Tensor(w), "bias": tp.Tensor(b)})
    norm.load_state_dict({"weight": tp.Tensor(gamma), "bias": tp.Tensor(beta)})
    return (lambda x: tp.silu(norm(conv(x)))), (w, b, gamma, beta)


def _expected(x, params, groups):
    """The 3x3 convolution (padding 1), GroupNorm and SiLU of `_conv_norm` in NumPy (float64)."""
    w, b, gamma, beta = params
    padded, (h, wd) = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)]), x.shape[2:]
    windows = ((i, j) for i in range(3) for j in range(3))
    c = sum(np.einsum("nchw,oc->nohw", padded[:, :, i : i + h, j : j + wd], w[:, :, i, j]) for i, j in windows)
    c = c + b[None, :, None, None]
    return numpy_group_norm(c, gamma, beta, groups, True, channels_last=False)


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_tp_group_norm_after_a_convolution_runs_as_one_call(logged, mode):
    rng = np.random.default_rng(2)
    net, params = _conv_norm(4, 16, 4, rng)
    x = rng.standard_normal((2, 4, 40, 40)).astype(np.float32)
    if mode == "eager":
        out, log = logged(lambda: np.from_dlpack(net(tp.Tensor(x))))
    else:
        exe, log = logged(lambda: tp.compile(net, args=[tp.InputInfo(x.shape, tp.float32)]))
        out = np.from_dlpack(exe(tp.Tensor(x)))
    assert "group-norms: 1 GroupNorm(s) as calls to tripy-kernels" in log
    np.testing.assert_allclose(out, _expected(x, params, 4), rtol=1e-4, atol=1e-4)


def test_a_batch_range_runs_every_bucket_on_the_kernel(logged):
    # (its images are independent: each bucket's program is static at its bound, see ``passes.independent_rows``;
    # the padded images are normalized on their own and dropped)
    rng = np.random.default_rng(3)
    net, params = _conv_norm(3, 8, 2, rng)
    exe, log = logged(lambda: tp.compile(net, args=[tp.InputInfo(((1, 4, 8), 3, 12, 12), tp.float32)], wait=True))
    assert log.count("group-norms: 1 GroupNorm(s)") == len(exe._program.ranges.programs)
    for n in (1, 3, 5, 8):
        x = rng.standard_normal((n, 3, 12, 12)).astype(np.float32)
        np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), _expected(x, params, 2), rtol=1e-4, atol=1e-4)
