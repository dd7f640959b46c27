"""Sizes as expressions (tripy_trace.symbolic): the arithmetic's canonical form, the ops' rules, and what the
frontend makes of them (a size that does not vary is static, so its dim is typed with the number)."""

from __future__ import annotations

import numpy as np
import pytest

import tripy as tp
from tripy_flatir import dtypes
from tripy_flatir.device import CPU
from tripy_flatir.tensor import DYNAMIC
from tripy_trace import symbolic
from tripy_trace.ops.placeholder import Placeholder


def test_exact_division_by_a_product_cancels():
    b, s = symbolic.symbol(), symbolic.symbol()
    volume = symbolic.mul(symbolic.mul(b, s), 72)
    assert symbolic.floordiv(volume, symbolic.mul(symbolic.mul(s, b), 8)) == 9
    assert symbolic.truncdiv(volume, symbolic.mul(b, 72)) == s
    assert symbolic.mod(volume, symbolic.mul(b, 8)) == 0


def test_sums_and_products_have_one_form():
    a, b = symbolic.symbol(), symbolic.symbol()
    assert symbolic.sub(symbolic.add(a, b), symbolic.add(b, a)) == 0
    assert symbolic.mul(symbolic.add(a, 1), 2) == symbolic.add(symbolic.mul(2, a), 2)
    assert symbolic.maximum(a, a) == a and symbolic.minimum(3, 5) == 3


@pytest.mark.parametrize(
    "make",
    [
        lambda a, b: symbolic.floordiv(symbolic.add(a, 1), 2),  # (not exact: a stays a quotient)
        lambda a, b: symbolic.floordiv(symbolic.mul(a, b), symbolic.add(a, b)),  # (not one term)
        lambda a, b: symbolic.maximum(a, b),
        lambda a, b: symbolic.mod(a, b),
        lambda a, b: symbolic.floordiv(a, 0),  # (division by zero: the run time's to report)
    ],
)
def test_what_does_not_simplify_stays_an_expression(make):
    a, b = symbolic.symbol(), symbolic.symbol()
    result = make(a, b)
    assert isinstance(result, symbolic.Expr) and result.constant is None
    assert make(a, b) == result  # (equal expressions compare equal)


def test_a_broadcast_of_different_sizes_is_a_new_size():
    a, b = symbolic.symbol(), symbolic.symbol()
    assert symbolic.broadcast([(a, 1), (1, 4)]) == [a, 4]
    assert symbolic.broadcast([(a,), (a,)]) == [a]
    (new,) = symbolic.broadcast([(a,), (b,)])  # (either may be 1 at run time)
    assert new not in (a, b)


def _input(shape):
    return Placeholder.build([], None, shape=shape, dtype=dtypes.float32, device=CPU).outputs[0]


def test_every_dynamic_dim_of_an_input_is_a_size_of_its_own():
    x = _input((DYNAMIC, 4, DYNAMIC))
    d0, d1, d2 = symbolic.dims(x)
    assert d1 == 4 and isinstance(d0, symbolic.Expr) and d0 != d2
    assert symbolic.dims(x) == (d0, d1, d2)  # (the same expressions each time)


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
