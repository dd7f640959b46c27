"""tripy-kernels' max pool handler (oneDNN) against NumPy: tp.maxpool in eager and compiled mode, channels-first and
after a convolution (channels-last, as the channels-last pass leaves it), 2 and 3 pooled dims, padded and strided,
each compiled to the handler by the ``onednn-pooling`` pass; and the handler's check of its attributes."""

import itertools

import numpy as np
import pytest

pytest.importorskip("tripy_kernels")

import tripy as tp  # noqa: E402
from tripy_backend import _xla, kernels  # noqa: E402


@pytest.fixture(autouse=True)
def registered():
    assert kernels.installed() is not None and kernels.has(kernels.MAX_POOL)


def numpy_maxpool(x, kernel, stride, padding):
    """Max pool of [N, C, *spatial] `x`, padding as -inf."""
    x = np.pad(x, [(0, 0), (0, 0), *padding], constant_values=-np.inf)
    spatial = x.shape[2:]
    out_shape = [(s - k) // st + 1 for s, k, st in zip(spatial, kernel, stride)]
    out = np.full(x.shape[:2] + tuple(out_shape), -np.inf, dtype=x.dtype)
    for offsets in itertools.product(*(range(k) for k in kernel)):
        window = tuple(slice(o, o + (n - 1) * st + 1, st) for o, n, st in zip(offsets, out_shape, stride))
        out = np.maximum(out, x[(slice(None), slice(None), *window)])
    return out


CASES = {
    "resnet": ((2, 8, 15, 17), (3, 3), (2, 2), ((1, 1), (1, 1))),
    "2x2": ((1, 4, 8, 8), (2, 2), (2, 2), ((0, 0), (0, 0))),
    "uneven-padding": ((1, 3, 9, 7), (3, 2), (1, 2), ((2, 0), (1, 1))),
    "3d": ((1, 2, 6, 7, 5), (2, 3, 2), (2, 1, 2), ((0, 1), (1, 1), (0, 0))),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_tp_maxpool_runs_on_onednn(logged, name, mode):
    shape, kernel, stride, padding = CASES[name]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    pool = lambda t: tp.maxpool(t, kernel, stride=stride, padding=padding)  # noqa: E731
    if mode == "eager":
        out, log = logged(lambda: np.from_dlpack(pool(tp.Tensor(x))))
    else:
        exe, log = logged(lambda: tp.compile(pool, args=[tp.InputInfo(shape, tp.float32)]))
        out = np.from_dlpack(exe(tp.Tensor(x)))
    assert "onednn-pooling: 1 max pool(s) to oneDNN" in log
    np.testing.assert_array_equal(out, numpy_maxpool(x, kernel, stride, padding))


def test_a_max_pool_after_a_convolution_reads_it_channels_last(logged):
    rng = np.random.default_rng(1)
    conv = tp.Conv(3, 8, (1, 1))
    w, b = rng.standard_normal((8, 3, 1, 1)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    conv.load_state_dict({"weight": tp.Tensor(w), "bias": tp.Tensor(b)})
    x = rng.standard_normal((2, 3, 12, 12)).astype(np.float32)
    net = lambda t: tp.maxpool(conv(t), (3, 3), stride=(2, 2), padding=((1, 1), (1, 1)))  # noqa: E731
    exe, log = logged(lambda: tp.compile(net, args=[tp.InputInfo(x.shape, tp.float32)]))
    assert "onednn-pooling: 1 max pool(s) to oneDNN" in log and "channels-last: 1 convolution(s)" in log
    c = np.einsum("nchw,oc->nohw", x.astype(np.float64), w[:, :, 0, 0]) + b[None, :, None, None]
    expected = numpy_maxpool(c, (3, 3), (2, 2), ((1, 1), (1, 1)))
    np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), expected, rtol=1e-5, atol=1e-5)


def test_attributes_that_do_not_match_the_operand_fail_the_call():
    config = (
        "layout = array<i64: 0, 3, 1, 2>, window = array<i64: 3>, strides = array<i64: 2, 2>, "
        "pad_lo = array<i64: 1, 1>, pad_hi = array<i64: 1, 1>, dilation = array<i64: 1, 1>"
    )
    program = f"""func.func @main(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {{
  %0 = stablehlo.custom_call @tripy_onednn_max_pool_f32(%x) {{api_version = 4 : i32, backend_config = {{{config}}}}} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}}"""
    exe = _xla.compile(program.encode(), "cpu", 0)
    with pytest.raises(Exception, match="the attributes do not match the operand's rank"):
        _xla.execute(exe, [_xla.to_device(np.ones((1, 8, 8, 4), np.float32), "cpu", 0)])[0].block_until_ready()
