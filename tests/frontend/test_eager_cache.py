"""Eager mode's cache hit path: graphs that look alike must not share a program, a reused program gets
its arguments in the right order, and the cheap bookkeeping (stack capture, scalar constants, DLPack
export) gives the same answers as the general paths."""

import io

import numpy as np
import pytest

import tripy as tp
from tripy_backend import plan
from tripy_frontend import eager


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        lines = f.read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if marker in line and "_line_of(" not in line)


def _data(seed: int, shape=(3, 4)) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_look_alike_graphs_each_get_their_own_program():
    """The same ops in the same order, on equally shaped inputs, evaluated one after the other."""
    x, y = _data(0), _data(1)
    cases = [
        (lambda a, b: a * b + a, lambda a, b: a * b + a),
        (lambda a, b: a * b + b, lambda a, b: a * b + b),  # other wiring
        (lambda a, b: a * b + 2.0, lambda a, b: a * b + 2.0),
        (lambda a, b: a * b + 3.0, lambda a, b: a * b + 3.0),  # other constant
        (lambda a, b: a * b - 0.0, lambda a, b: a * b - 0.0),
        (lambda a, b: a * a + a, lambda a, b: a * a + a),  # one input used twice
        (lambda a, b: b - a, lambda a, b: b - a),  # operand order
    ]
    for _ in range(2):  # the second round runs on cached programs
        for fn, ref in cases:
            np.testing.assert_allclose(np.from_dlpack(fn(tp.Tensor(x), tp.Tensor(y))), ref(x, y), rtol=1e-6)


def test_dtype_is_part_of_the_key():
    x = np.array([1.5, 2.5], dtype=np.float32)
    a = tp.Tensor(x) * 2.0
    b = tp.Tensor(x.astype(np.float16)) * 2.0
    assert np.from_dlpack(a).dtype == np.float32 and np.from_dlpack(b).dtype == np.float16
    np.testing.assert_array_equal(np.from_dlpack(b), (x * 2).astype(np.float16))


def test_arguments_in_order_whatever_order_the_inputs_were_made_in():
    x, y = _data(2), _data(3)

    def run(first_x: bool) -> np.ndarray:
        if first_x:
            tx, ty = tp.Tensor(x), tp.Tensor(y)
        else:
            ty, tx = tp.Tensor(y), tp.Tensor(x)
        return np.from_dlpack(tx - tp.exp(ty))

    expected = x - np.exp(y)
    for first_x in (True, False, True, False):
        np.testing.assert_allclose(run(first_x), expected, rtol=1e-6)


def test_cache_hit_loop_compiles_once():
    """The shape of benchmarks/eager_cache_hit.py: new data every iteration, one compilation."""

    def expression(a, b):
        x = a @ b
        x = tp.tanh(x + a) * 0.5 - b
        return tp.sqrt(tp.exp(x) / 2.0 + 1.0) * a

    data = [(_data(10 + i, (8, 8)), _data(20 + i, (8, 8))) for i in range(4)]
    np.from_dlpack(expression(tp.Tensor(data[0][0]), tp.Tensor(data[0][1])))
    misses = eager.PROGRAM_CACHE.misses
    for a, b in data:
        out = np.from_dlpack(expression(tp.Tensor(a), tp.Tensor(b)))
        x = np.tanh(a @ b + a) * 0.5 - b
        np.testing.assert_allclose(out, np.sqrt(np.exp(x) / 2.0 + 1.0) * a, rtol=1e-5)
    assert eager.PROGRAM_CACHE.misses == misses


def test_evaluated_intermediates_are_arguments():
    x = tp.Tensor(_data(4))
    y = x * 2.0
    y.eval()
    z = y + 1.0  # built after y was evaluated: y is an input of z's program
    np.testing.assert_allclose(np.from_dlpack(z), _data(4) * 2 + 1, rtol=1e-6)
    w = tp.Tensor(_data(5)) * 2.0
    v = w + 1.0  # built before w is evaluated
    w.eval()
    np.testing.assert_allclose(np.from_dlpack(v), _data(5) * 2 + 1, rtol=1e-6)


def test_scalars_keep_their_exact_values():
    x = tp.Tensor(np.ones((2,), np.float32))
    np.testing.assert_array_equal(np.from_dlpack(x * -0.0), np.array([-0.0, -0.0], np.float32))
    assert np.signbit(np.from_dlpack(x * -0.0)).all() and not np.signbit(np.from_dlpack(x * 0.0)).any()
    assert np.isnan(np.from_dlpack(x * float("nan"))).all()
    i = tp.Tensor(np.array([3, 4], np.int32))
    assert np.from_dlpack(i + 1).tolist() == [4, 5] and np.from_dlpack(i + True).tolist() == [4, 5]


@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.bfloat16])
def test_numbers_next_to_floating_tensors_take_the_tensors_dtype(dtype):
    """The operators' shortcut for a Python float or int next to a floating tensor (no Tensor for the number)
    gives what the general path (a NumPy scalar, checked by scalar_like) gives, and equal numbers of other
    types, dtypes or signs are not confused."""
    x = tp.cast(tp.Tensor(np.array([1.0, -2.0, 3.0], np.float32)), dtype)
    as_np = lambda t: np.from_dlpack(tp.cast(t, tp.float32))  # noqa: E731
    for value in (0.5, 1, 1.0, True, 3, 2.0, 0.0, -0.0):
        general = np.float32(value)
        for fast, slow in ((x * value, x * general), (x + value, x + general), (x - value, x - general)):
            assert fast.dtype == slow.dtype == dtype
            np.testing.assert_array_equal(as_np(fast), as_np(slow))
            assert (np.signbit(as_np(fast)) == np.signbit(as_np(slow))).all()
        if value:
            assert (x / value).dtype == dtype
            np.testing.assert_array_equal(as_np(x / value), as_np(x / general))
    assert np.signbit(as_np(x * -0.0)[0]) and not np.signbit(as_np(x * 0.0)[0])
    assert np.isnan(as_np(x + float("nan"))).all()
    x16 = tp.cast(x, tp.float16) if dtype != tp.float16 else tp.cast(x, tp.float32)
    assert (x * 0.5).dtype == dtype and (x16 * 0.5).dtype == x16.dtype  # 0.5 of one dtype is not the other's


def test_numbers_next_to_other_tensors_keep_their_checks():
    i = tp.Tensor(np.array([3, 4], np.int32))
    with pytest.raises(tp.TripyException, match="without losing precision"):
        i * 0.5
    assert (i / 2).dtype == tp.float32 and np.from_dlpack(i / 2).tolist() == [1.5, 2.0]
    assert np.from_dlpack(i * 2.0).tolist() == [6, 8]  # (an integral float is fine)
    b = tp.Tensor(np.array([True, False]))
    with pytest.raises(tp.TripyException, match="bool tensor"):
        b & 1


def test_stack_info_points_at_the_line_and_expression():
    a = tp.Tensor(np.ones((2, 2), np.float32))
    # fmt: off
    b = (a +
         a)  # MARK-multiline
    # fmt: on
    c = tp.tanh(a)  # MARK-call
    frame = b.stack_info.user_frame
    assert frame.file == __file__ and frame.function == "test_stack_info_points_at_the_line_and_expression"
    assert frame.line == _line_of("# MARK-multiline") - 1  # a multi-line expression: the line it starts on
    frame = c.stack_info.user_frame
    assert frame.line == _line_of("# MARK-call") and "tp.tanh(a)" in frame.code
    start, end = frame.column_range
    assert frame.code[start:end] == "tp.tanh(a)"


def test_dlpack_export_shares_the_result():
    t = tp.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)) + 1.0
    first, second = np.from_dlpack(t), np.from_dlpack(t)
    np.testing.assert_array_equal(first, np.arange(6).reshape(2, 3) + 1)
    assert first.__array_interface__["data"][0] == second.__array_interface__["data"][0]  # zero-copy, one buffer
    assert t.__dlpack_device__()[1] == 0
    with pytest.raises(Exception):
        t.__dlpack__(dl_device=(2, 0))  # a CUDA device: not where the data is


def test_eager_programs_use_the_eager_optimization_level():
    x = _data(40, (4, 4))
    out = tp.Tensor(x) @ tp.Tensor(x) + 1.0
    np.testing.assert_allclose(np.from_dlpack(out), x @ x + 1.0, rtol=1e-5)
    programs = list(eager.PROGRAM_CACHE._items.values())
    assert programs and programs[-1].optimization_level == plan.EAGER_OPTIMIZATION_LEVEL == 2


def test_results_are_freed_without_the_cycle_collector():
    """Single-output ops hold their output weakly: dropping a result frees its graph and buffer at once."""
    import gc
    import weakref

    gc.disable()
    try:
        a = tp.Tensor(_data(41))
        mid = tp.tanh(a * 2.0)
        intermediate = weakref.ref(mid.trace_tensor)
        out = mid + a
        del mid
        out.eval()
        assert intermediate() is None  # the graph that computed out is gone as soon as its value replaced it
        result = weakref.ref(out.trace_tensor)
        del out
        assert result() is None  # and the result (with its storage and buffer) as soon as the tensor goes
    finally:
        gc.enable()


@pytest.mark.parametrize("setting", ["0", "1"])
def test_cpu_dispatch_in_the_calling_thread_or_asynchronous(setting):
    """TRIPY_CPU_ASYNC_DISPATCH picks how tripy's CPU client runs programs; results are the same either way
    (a new process: the client is made once per process)."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, tripy as tp\n"
        "from tripy_backend import _xla\n"
        "x = np.arange(12, dtype=np.float32).reshape(3, 4)\n"
        "out = [np.from_dlpack(tp.tanh(tp.Tensor(x) @ tp.Tensor(x.T.copy()) * 0.01) + i).copy() for i in range(3)]\n"
        "expected = [np.tanh(x @ x.T * 0.01) + i for i in range(3)]\n"
        "assert all(np.allclose(o, e, atol=1e-6) for o, e in zip(out, expected))\n"
        "print(_xla.cpu_dispatch_is_async())\n"
    )
    env = dict(os.environ, TRIPY_CPU_ASYNC_DISPATCH=setting)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("True" if setting == "1" else "False")


@pytest.mark.parametrize(
    "verbosity, logged",
    [("cache", True), ({"frontend": "cache"}, True), ({"backend": "cache"}, False), ("info", False)],
)
def test_cache_hits_are_logged_when_asked_for(monkeypatch, verbosity, logged):
    x = tp.Tensor(np.ones((2,), np.float32))
    np.from_dlpack(tp.exp(x) * 3.0)  # (compiled, or cached by an earlier test)
    stream = io.StringIO()
    monkeypatch.setattr(tp.logger, "stream", stream)
    with tp.logger.use_verbosity(verbosity):
        np.from_dlpack(tp.exp(x) * 3.0)
    assert ("program cache hit" in stream.getvalue()) == logged


def test_a_loop_that_changes_only_a_number_compiles_once():
    """Python numbers next to tensors are arguments of eager programs, never part of the cache key: a
    schedule (a temperature, a scale, a step size) reuses one program, and each result is NumPy's."""
    x_np = _data(50, (4, 5))
    x = tp.Tensor(x_np)
    i_np = np.arange(-3, 3, dtype=np.int32)
    i = tp.Tensor(i_np)

    def run(s: float, k: int):
        return (
            np.from_dlpack(x * s),
            np.from_dlpack(x / s),
            np.from_dlpack(s - x),
            np.from_dlpack((x * s + (1 - s)) / (s + 0.125) - tp.maximum(x, s / 2)),
            np.from_dlpack((i * k + (k - 4)) // 3),
        )

    run(0.1, 2)  # (compiles, or finds the programs of an earlier run)
    misses = eager.PROGRAM_CACHE.misses
    f = np.float32
    for step in range(1, 9):
        s = step / 7  # a new float each iteration (no power of two: no division is exact)
        mul, div, rsub, expr, ints = run(s, step)
        np.testing.assert_array_equal(mul, x_np * f(s))
        # (XLA may divide by a broadcast number as a product with its reciprocal: within an ulp)
        np.testing.assert_allclose(div, x_np / f(s), rtol=float(np.finfo(np.float32).eps), atol=0)
        np.testing.assert_array_equal(rsub, f(s) - x_np)
        # (XLA:CPU may fuse a multiply and an add into one rounding: within an ulp of NumPy's two)
        np.testing.assert_allclose(
            expr, (x_np * f(s) + f(1 - s)) / f(s + 0.125) - np.maximum(x_np, f(s / 2)), rtol=3e-7, atol=3e-7
        )
        np.testing.assert_array_equal(ints, (i_np * step + (step - 4)) // 3)
    assert eager.PROGRAM_CACHE.misses == misses


@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.bfloat16])
def test_numbers_take_the_tensors_dtype_as_arguments_and_as_literals(dtype):
    """Eager passes the number as an argument of the tensor's dtype, rounded as NumPy rounds it; tp.compile
    bakes it in as a literal. Either way XLA may turn a division by it into a product with its rounded
    reciprocal (within an ulp); the other operations are exact."""
    import ml_dtypes

    np_dtype = {tp.float32: np.float32, tp.float16: np.float16, tp.bfloat16: ml_dtypes.bfloat16}[dtype]
    x_np = _data(51, (3, 4)).astype(np_dtype)
    s = 0.3

    def f(x):
        return (x * s, x / s, x + s, s - x)

    x = tp.Tensor(x_np.astype(np.float32)) if dtype is tp.bfloat16 else tp.Tensor(x_np)
    x = tp.cast(x, dtype)
    # One IEEE operation on values of the dtype, rounded to it (f32 has room for f16 and bf16 to round once)
    x32, s32 = x_np.astype(np.float32), np.float32(np_dtype(s))
    expected = [
        (x32 * s32).astype(np_dtype),
        (x32 / s32).astype(np_dtype),
        (x32 + s32).astype(np_dtype),
        (s32 - x32).astype(np_dtype),
    ]
    # (evaluated first: a cast in the same program lets XLA skip rounding to the dtype)
    as_f32 = lambda t: np.from_dlpack(tp.cast(t.eval(), tp.float32))  # noqa: E731
    ulp = float(ml_dtypes.finfo(np_dtype).eps)
    exe = tp.compile(f, args=[tp.InputInfo((3, 4), dtype)])
    for results in (f(x), exe(x)):
        for i, (out, want) in enumerate(zip(results, expected)):
            assert out.dtype == dtype
            if i == 1:  # the division
                np.testing.assert_allclose(as_f32(out), want.astype(np.float32), rtol=ulp, atol=0)
            else:
                np.testing.assert_array_equal(as_f32(out), want.astype(np.float32))
