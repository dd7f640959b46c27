"""Dynamic shapes: one executable, compiled once, called at min, opt, max and in between, against NumPy;
shape values (x.shape[d]) in reshape, full, slicing, reductions and arithmetic; calls outside the
declared range refused with the documented message."""

import re

import numpy as np
import pytest

import tripy as tp
import tripy_backend

RNG = np.random.default_rng(0)

MIN, OPT, MAX = 2, 4, 8
SIZES = [MIN, 3, OPT, 6, MAX]  # min, between, opt, between, max
X_INFO = tp.InputInfo(((MIN, OPT, MAX), 6), dtype=tp.float32)


def rand(*shape):
    return RNG.uniform(0.5, 2.0, size=shape).astype(np.float32)


def _line_of(marker):
    with open(__file__) as f:
        lines = f.read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if marker in line and "_line_of(" not in line)


CASES = {
    "elementwise_broadcast": (
        lambda x: tp.tanh(x) * 2.0 + tp.Tensor(np.arange(6, dtype=np.float32)),
        lambda a: np.tanh(a) * 2 + np.arange(6),
    ),
    "reshape_with_dim_size": (lambda x: tp.reshape(x, (x.shape[0], 2, -1)), lambda a: a.reshape(a.shape[0], 2, -1)),
    "reshape_flatten": (lambda x: tp.reshape(x, (-1,)), lambda a: a.reshape(-1)),
    "reshape_shape_arithmetic": (
        lambda x: tp.reshape(x, (x.shape[0] * 3, x.shape[1] // 3)),
        lambda a: a.reshape(a.shape[0] * 3, 2),
    ),
    "full_with_dim_size": (lambda x: tp.full((x.shape[0], 2), 1.5), lambda a: np.full((a.shape[0], 2), 1.5)),
    "full_with_shape_arithmetic": (
        lambda x: tp.full((x.shape[0] * 2 + 1,), 3.0),
        lambda a: np.full((a.shape[0] * 2 + 1,), 3.0),
    ),
    "full_like": (lambda x: tp.full_like(x, 7.0), lambda a: np.full_like(a, 7.0)),
    "mean_over_dynamic_dim": (lambda x: tp.mean(x, dim=0), lambda a: a.mean(0)),
    "mean_all": (lambda x: tp.mean(x), lambda a: a.mean()),
    "mean_keepdim": (lambda x: tp.mean(x, dim=0, keepdim=True), lambda a: a.mean(0, keepdims=True)),
    "sum_keepdim_broadcast_back": (lambda x: x - tp.sum(x, dim=1, keepdim=True), lambda a: a - a.sum(1, keepdims=True)),
    "divide_by_dim_size": (lambda x: tp.sum(x, dim=0) / tp.cast(x.shape[0], tp.float32), lambda a: a.mean(0)),
    "softmax_over_dynamic_dim": (lambda x: tp.softmax(x, dim=0), lambda a: np.exp(a) / np.exp(a).sum(0, keepdims=True)),
    "matmul": (
        lambda x: x @ tp.Tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(6, 2)),
        lambda a: a @ np.linspace(-1, 1, 12, dtype=np.float32).reshape(6, 2),
    ),
    "matmul_contracting_dynamic_dim": (lambda x: tp.transpose(x, 0, 1) @ x, lambda a: a.T @ a),
    "concatenate_dynamic_dim": (lambda x: tp.concatenate([x, x * 2.0], dim=0), lambda a: np.concatenate([a, a * 2])),
    "slice_with_dim_size": (lambda x: x[: x.shape[0] // 2], lambda a: a[: a.shape[0] // 2]),
    "slice_from_end": (lambda x: x[-1], lambda a: a[-1]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_one_executable_for_every_size_in_range(name):
    fn, ref = CASES[name]
    exe = tp.compile(fn, args=[X_INFO])
    for n in SIZES:
        a = rand(n, 6)
        out = exe(tp.Tensor(a))
        expected = ref(a).astype(np.float32)
        got = np.from_dlpack(out)
        assert got.shape == expected.shape, (n, got.shape, expected.shape)
        assert np.allclose(got, expected, rtol=1e-5, atol=1e-5), n
        assert out.shape == expected.shape  # the result's shape is known after the call


def test_compiles_the_whole_range_at_compile_time():
    exe = tp.compile(lambda x: tp.reshape(x, (x.shape[0], 3, 2)) * 2.0, args=[X_INFO])
    before = tripy_backend.compilation_count()
    for n in SIZES * 3:
        a = rand(n, 6)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(a))), a.reshape(n, 3, 2) * 2)
    assert tripy_backend.compilation_count() == before
    assert exe._program.num_specializations == 0  # nothing specialized at call time


def test_polymorphic_program_is_built_once_and_has_dynamic_dims():
    exe = tp.compile(lambda x: tp.full((x.shape[0], 2), 1.0) + tp.sum(x, dim=1, keepdim=True), args=[X_INFO])
    text = exe.stablehlo
    assert "tensor<?x6xf32>" in text  # the input
    assert "get_dimension_size" in text  # shape arithmetic in StableHLO
    assert "dynamic_broadcast_in_dim" in text


def test_static_program_lowers_to_static_mlir():
    exe = tp.compile(
        lambda x: tp.reshape(x, (x.shape[0], -1)) + tp.full((x.shape[0], 6), 1.0),
        args=[tp.InputInfo((4, 6), tp.float32)],
    )
    text = exe.stablehlo
    assert "?" not in text
    assert "get_dimension_size" not in text and "dynamic_" not in text
    a = rand(4, 6)
    assert np.allclose(np.from_dlpack(exe(tp.Tensor(a))), a + 1)


def test_static_dims_fold_to_python_ints_while_tracing():
    seen = {}

    def fn(x):
        seen["static"] = x.shape[1]
        seen["dynamic"] = x.shape[0]
        return x

    tp.compile(fn, args=[X_INFO])
    assert seen["static"] == 6 and int(seen["static"]) == 6
    assert isinstance(seen["dynamic"], tp.DimensionSize)


def test_several_dynamic_inputs_and_dims():
    def fn(x, y):
        return tp.sum(x, dim=1) @ y  # (b, s, k) -> (b, k) @ (k, n)

    exe = tp.compile(
        fn, args=[tp.InputInfo(((1, 2, 4), (1, 5, 9), 3), tp.float32), tp.InputInfo((3, (1, 2, 5)), tp.float32)]
    )
    for b, s, n in [(1, 1, 1), (2, 5, 2), (4, 9, 5), (3, 7, 4)]:
        x, y = rand(b, s, 3), rand(3, n)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x), tp.Tensor(y))), x.sum(1) @ y, rtol=1e-5)


def test_named_dimensions_must_agree():
    batch = tp.NamedDimension("batch", 1, 2, 4)
    exe = tp.compile(
        lambda x, y: x + tp.unsqueeze(y, 1),
        args=[tp.InputInfo((batch, 3), tp.float32), tp.InputInfo((batch,), tp.float32)],
    )
    for n in (1, 3, 4):
        x, y = rand(n, 3), rand(n)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x), tp.Tensor(y))), x + y[:, None])
    with pytest.raises(tp.TripyException) as e:
        exe(tp.Tensor(rand(3, 3)), tp.Tensor(rand(2)))  # MARK-named
    msg = str(e.value)
    assert (
        "Inputs 'x' and 'y' disagree on the named dimension 'batch': dim 0 of 'x' is 3, but dim 0 of 'y' is 2." in msg
    )
    assert f"{__file__}:{_line_of('MARK-named')}" in msg


@pytest.mark.parametrize(
    "shape,message",
    [
        (
            (MAX + 1, 6),
            f"Input 'x' has shape [{MAX + 1}, 6]: dim 0 is {MAX + 1}, which is outside the allowed range "
            f"[{MIN}, {MAX}].",
        ),
        (
            (MIN - 1, 6),
            f"Input 'x' has shape [{MIN - 1}, 6]: dim 0 is {MIN - 1}, which is outside the allowed range "
            f"[{MIN}, {MAX}].",
        ),
        ((4, 5), "Input 'x' has shape [4, 5]: dim 1 is 5, but it must be 6 (a static dim)."),
        ((4,), "Input 'x' has rank 1 (shape [4]), but the executable expects rank 2."),
    ],
)
def test_calls_outside_the_range_are_refused(shape, message):
    exe = tp.compile(lambda x: x * 2.0, args=[X_INFO])
    before = exe._program.num_specializations
    with pytest.raises(tp.TripyException, match=re.escape(message)) as e:
        exe(tp.Tensor(rand(*shape)))  # MARK-range
    msg = str(e.value)
    assert f"{__file__}:{_line_of('MARK-range')}" in msg
    assert f"Allowed shapes: min=[{MIN}, 6], max=[{MAX}, 6]." in msg or "rank" in message
    assert exe._program.num_specializations == before  # nothing was compiled for a refused call


def test_wrong_dtype_is_refused():
    exe = tp.compile(lambda x: x * 2.0, args=[X_INFO])
    with pytest.raises(
        tp.TripyException, match=re.escape("Input 'x' has data type int32, but the executable expects float32.")
    ):
        exe(tp.Tensor(np.ones((4, 6), np.int32)))


def test_evaluating_a_dynamic_size_while_tracing_is_a_clear_error():
    def fn(x):
        return tp.reshape(x, (int(x.shape[0]), 6))  # MARK-int

    with pytest.raises(tp.TripyException, match="Cannot evaluate a tensor while tripy.compile\\(\\) traces") as e:
        tp.compile(fn, args=[X_INFO])
    assert f"{__file__}:{_line_of('MARK-int')}" in str(e.value)
    assert "DimensionSize" in str(e.value)
