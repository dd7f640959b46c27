"""Shape arithmetic that does not vary is static while tracing (tripy_trace.symbolic): the dims it makes are
typed with the number, sizes that vary stay dynamic, and the compiled results match NumPy."""

from __future__ import annotations

import numpy as np

import tripy as tp
from tripy_flatir.tensor import DYNAMIC
from tripy_trace.trace import Trace


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


def test_a_size_is_read_once_and_a_shape_built_once_however_many_ops_need_them():
    table = np.random.rand(10, 4).astype(np.float32)

    def layers(idx):  # [b, s] -> [b, s, 4]
        x = tp.gather(tp.Tensor(table), 0, idx)  # (a lookup: its dims are the index's)
        for _ in range(3):
            b, s, c = x.shape
            x = tp.reshape(tp.tanh(tp.reshape(x, (b * s, c))), (b, s, c))[:, :, :]
        return x

    built = []

    def traced(idx):
        out = layers(idx)
        built.extend(type(op).__name__ for op in Trace([out.trace_tensor]).ops)
        return out

    exe = tp.compile(traced, args=[tp.InputInfo(((1, 2, 3), (1, 4, 8)), tp.int32)])
    # (b and s read once each; the shapes [b * s, 4] and [b, s, 4] built once each, for all three layers)
    assert built.count("DimSize") == 2 and built.count("Concatenate") == 2
    idx = np.random.randint(0, 10, (3, 5)).astype(np.int32)
    np.testing.assert_allclose(np.asarray(exe(tp.Tensor(idx))), np.tanh(np.tanh(np.tanh(table[idx]))), 1e-6)


def test_the_lowered_program_reads_each_input_size_once():
    # (every op that needs b or s at run time reads it from the input: FlatIRTensor.size_sources)
    w = np.random.rand(16, 16).astype(np.float32)

    def attention(x):  # [b, s, 16]
        h = tp.softmax(x @ tp.Tensor(w), dim=-1)
        scores = tp.softmax(h @ tp.transpose(h, 1, 2), dim=-1)  # [b, s, s]
        return scores @ x + x * 0.5

    exe = tp.compile(attention, args=[tp.InputInfo(((1, 2, 3), (1, 4, 8), 16), tp.float32)])
    assert exe.stablehlo.count("get_dimension_size") == 2
    x = np.random.rand(3, 5, 16).astype(np.float32)

    def softmax(a):
        e = np.exp(a - a.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    h = softmax(x @ w)
    expected = softmax(h @ h.transpose(0, 2, 1)) @ x + x * 0.5
    np.testing.assert_allclose(np.asarray(exe(tp.Tensor(x))), expected, rtol=1e-4, atol=1e-5)


def test_the_lowering_builds_each_size_read_and_shape_vector_once(monkeypatch):
    # (tripy_trace.lowering.shared_shapes: the ops ask for the same sizes and shape vectors again and again; each is
    # built once, not built and then dropped by FlatIRFunction._shared)
    from tripy_flatir.ops.concatenate import ConcatenateOp
    from tripy_flatir.ops.get_dimension_size import GetDimensionSizeOp

    built = {GetDimensionSizeOp: 0, ConcatenateOp: 0}

    def counting(cls, inputs, outputs, **attrs):
        built[cls] += 1
        return original[cls](inputs, outputs, **attrs)

    w = np.random.rand(16, 16).astype(np.float32)

    def layers(x):  # [b, s, 16]: each op broadcasts against the run-time shape
        for _ in range(4):
            x = tp.tanh(x @ tp.Tensor(w) + x * 0.5 - 1.0)
        return x

    original = {cls: cls.build for cls in built}  # (bound to each class: the op a build makes)
    for cls in built:
        monkeypatch.setattr(cls, "build", classmethod(counting))
    exe = tp.compile(layers, args=[tp.InputInfo(((1, 2, 3), (1, 4, 8), 16), tp.float32)])
    assert built[GetDimensionSizeOp] == 2  # b and s, once each
    assert built[ConcatenateOp] == exe.stablehlo.count("stablehlo.concatenate")
    x = np.random.rand(3, 5, 16).astype(np.float32)
    expected = x
    for _ in range(4):
        expected = np.tanh(expected @ w + expected * 0.5 - 1.0)
    np.testing.assert_allclose(np.asarray(exe(tp.Tensor(x))), expected, rtol=1e-5, atol=1e-5)
