"""Shape arithmetic that does not vary is static while tracing (tripy_trace.symbolic): the dims it makes are
typed with the number, sizes that vary stay dynamic, and the compiled results match NumPy."""

from __future__ import annotations

import numpy as np

import tripy as tp
from tripy_flatir.tensor import DYNAMIC


def _compiled_shapes(func, shape):
    seen = {}

    def traced(x):
        out = func(x)
        seen["shape"] = out.trace_tensor.shape
        return out

    exe = tp.compile(traced, args=[tp.InputInfo(shape, tp.float32)])
    return seen["shape"], exe


def test_heads_split_by_minus_one_after_a_matmul_is_static():
    w = np.random.rand(8, 8).astype(np.float32)

    def heads(x):
        b, c, h, wd = x.shape
        tokens = tp.permute(tp.reshape(x, (b, c, h * wd)), (0, 2, 1)) @ tp.Tensor(w)  # [b, 9, 8]
        split = tp.softmax(tp.reshape(tokens, (b, -1, 2, 4)), -1)  # [b, 9, 2, 4]
        return tp.reshape(tp.transpose(split, 1, 2), (b, 2, -1))  # [b, 2, 36]

    shape, exe = _compiled_shapes(heads, ((1, 2, 4), 8, 3, 3))
    assert shape == (DYNAMIC, 2, 36)
    x = np.random.rand(3, 8, 3, 3).astype(np.float32)
    tokens = x.reshape(3, 8, 9).transpose(0, 2, 1) @ w
    split = np.exp(tokens.reshape(3, 9, 2, 4))
    split /= split.sum(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(exe(tp.Tensor(x))), split.transpose(0, 2, 1, 3).reshape(3, 2, 36), 1e-5)


def test_sizes_that_vary_stay_dynamic():
    def flat(x):
        b, s = x.shape
        doubled = tp.concatenate([x, x], dim=1)  # [b, 2s]
        return tp.reshape(doubled, (b * 2, -1))  # [2b, s]: the -1 is s, which varies

    shape, exe = _compiled_shapes(flat, ((1, 2, 4), (1, 3, 5)))
    assert shape == (DYNAMIC, DYNAMIC)
    x = np.random.rand(3, 5).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(exe(tp.Tensor(x))), np.concatenate([x, x], 1).reshape(6, 5))


def test_shape_arithmetic_that_cancels_gives_a_static_size():
    def f(x):
        b, s = x.shape
        size = (b * s * 6) // (s * b * 2)
        assert isinstance(size, tp.DimensionSize) and int(size) == 3  # (known while tracing: no evaluation)
        return tp.reshape(x, (b, s, 1)) * tp.ones((size,))

    shape, exe = _compiled_shapes(f, ((1, 2, 4), (1, 3, 5)))
    assert shape == (DYNAMIC, DYNAMIC, 3)
    x = np.random.rand(2, 4).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(exe(tp.Tensor(x))), np.repeat(x[:, :, None], 3, 2))
