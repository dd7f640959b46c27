"""tp.compile evaluates work on baked-in data once (compiler/hoisting.py): what is hoisted, what is not,
and that results stay right."""

import io

import numpy as np
import pytest

import tripy as tp
from tripy_backend import _xla, background
from tripy_frontend import eager
from tripy_frontend.compiler.hoisting import constant_frontier

RNG = np.random.default_rng(0)


def test_transposed_weight_is_hoisted_and_broadcast_constants_are_not():
    w = tp.Tensor(RNG.standard_normal((64, 128)).astype(np.float32))
    seen = {}

    def f(x):
        y = x @ tp.transpose(w, 0, 1) + tp.ones((1, 64))  # transpose(w): hoisted; ones: stays a constant
        seen["frontier"] = [(tuple(t.shape), type(t.producer).__name__) for t in constant_frontier([y.trace_tensor])]
        return y

    tp.compile(f, args=[tp.InputInfo((3, 128), tp.float32)])
    assert seen["frontier"] == [((128, 64), "Permute")]


def hoisted_shapes_of_linear(in_features: int, out_features: int, rows_list) -> dict:
    """rows -> shapes of what tp.compile hoists for a tp.Linear of `rows` rows (each program checked against NumPy)."""
    layer = tp.Linear(in_features, out_features)
    weight = RNG.standard_normal((out_features, in_features)).astype(np.float32)
    bias = RNG.standard_normal((out_features,)).astype(np.float32)
    layer.load_state_dict({"weight": tp.Tensor(weight), "bias": tp.Tensor(bias)})
    seen = {}
    for rows in rows_list:

        def f(x, rows=rows):
            y = layer(x)
            seen[rows] = [tuple(t.shape) for t in constant_frontier([y.trace_tensor])]
            return y

        exe = tp.compile(f, args=[tp.InputInfo((rows, in_features), tp.float32)])
        x = RNG.standard_normal((rows, in_features)).astype(np.float32)
        np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ weight.T + bias, rtol=1e-4, atol=1e-3)
    return seen


def test_transposed_weight_of_a_one_row_product_stays_in_the_program():
    # A program of one-row products reading >= 1M matrix elements runs on XLA:CPU's thunk runtime, where the
    # product reads the [out, in] weight as stored (XLA folds the transpose in), up to jaxlib 0.10; later ones copy
    # it on every call, so there the [in, out] weight is hoisted. With two rows it is hoisted.
    one_row = [] if _xla.matrix_vector_reads_stored_weight() else [(1024, 1024)]
    assert hoisted_shapes_of_linear(1024, 1024, (1, 2)) == {1: one_row, 2: [(1024, 1024)]}


def test_transposed_weight_of_a_product_of_many_rows_stays_in_the_program():
    # From MANY_ROWS rows, oneDNN's product (the classic runtime: jaxlib 0.6 and 0.7) reads the [out, in] weight as
    # stored, as fast or faster; from THUNK_MANY_ROWS, XLA's own (the thunk runtime, jaxlib 0.8 and later); below,
    # the [in, out] weight is hoisted (XLA would copy an [out, in] one transposed on every call).
    from tripy_backend.cpu_plan import MANY_ROWS, THUNK_MANY_ROWS

    many = MANY_ROWS if _xla.has_classic_cpu_runtime() else THUNK_MANY_ROWS
    seen = hoisted_shapes_of_linear(256, 512, (many - 1, many, 2 * many))
    assert seen == {many - 1: [(256, 512)], many: [], 2 * many: []}


@pytest.mark.skipif(not _xla.has_classic_cpu_runtime(), reason="jaxlib >= 0.8 has the thunk runtime only")
def test_forcing_the_classic_runtime_hoists_the_transposed_weight_of_a_one_row_product(monkeypatch):
    # (there, a one-row product would copy an [out, in] weight transposed on every call)
    monkeypatch.setenv("TRIPY_XLA_CPU_RUNTIME", "classic")
    w = tp.Tensor(RNG.standard_normal((1024, 1024)).astype(np.float32))
    seen = {}

    def f(x):
        y = x @ tp.transpose(w, 0, 1)
        seen["frontier"] = [tuple(t.shape) for t in constant_frontier([y.trace_tensor])]
        return y

    tp.compile(f, args=[tp.InputInfo((1, 1024), tp.float32)])
    assert seen["frontier"] == [(1024, 1024)]


@pytest.mark.parametrize("rows, width", [(3, 136), ((1, 3, 8), 138)], ids=["static", "range"])
def test_an_error_evaluating_baked_in_data_is_raised_by_tp_compile(monkeypatch, rows, width):
    # (tp.compile evaluates the transposed weight on a worker thread while it lowers and compiles the program: an
    # error there reaches the caller, a range's programs compiling in the background meanwhile skip their first
    # run, and the next compile works)
    # (a weight's shape that no other test evaluates: the eager program that transposes it is kept)
    w = tp.Tensor(RNG.standard_normal((72, width)).astype(np.float32))

    def f(x):
        return x @ tp.transpose(w, 0, 1)

    def fail(*args, **kwargs):
        raise tp.TripyException("the evaluation failed")

    monkeypatch.setattr(eager, "_compile", fail)
    with pytest.raises(tp.TripyException, match="the evaluation failed"):
        tp.compile(f, args=[tp.InputInfo((rows, width), tp.float32)])
    background.wait_all()
    monkeypatch.undo()
    exe = tp.compile(f, args=[tp.InputInfo((rows, width), tp.float32)])
    x = RNG.standard_normal((3, width)).astype(np.float32)
    np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ np.from_dlpack(w).T, rtol=1e-5, atol=1e-4)


def test_small_constants_stay_in_the_program():
    w = tp.Tensor(np.ones((4, 4), np.float32))  # 16 elements: below MIN_ELEMENTS
    seen = {}

    def f(x):
        y = x @ tp.transpose(w, 0, 1)
        seen["frontier"] = constant_frontier([y.trace_tensor])
        return y

    tp.compile(f, args=[tp.InputInfo((2, 4), tp.float32)])
    assert seen["frontier"] == []


def test_compiled_linear_with_hoisted_weight_matches_numpy_and_says_so():
    layer = tp.Linear(128, 96)
    weight = RNG.standard_normal((96, 128)).astype(np.float32)
    bias = RNG.standard_normal((96,)).astype(np.float32)
    layer.load_state_dict({"weight": tp.Tensor(weight), "bias": tp.Tensor(bias)})
    old_stream = tp.logger.stream
    tp.logger.stream = io.StringIO()
    try:
        with tp.logger.use_verbosity("compile"):
            exe = tp.compile(layer, args=[tp.InputInfo(((1, 2, 8), 128), tp.float32)])
        log = tp.logger.stream.getvalue()
    finally:
        tp.logger.stream = old_stream
    assert "evaluated 1 results of baked-in data once, reused 0 (12288 elements)" in log
    for n in (1, 3, 8):
        x = RNG.standard_normal((n, 128)).astype(np.float32)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ weight.T + bias, atol=1e-4)
    # the module's own weight is untouched (hoisting evaluates a new tensor, not the parameter)
    assert np.array_equal(np.from_dlpack(layer.weight), weight)


def test_two_executables_of_the_same_weights_share_the_hoisted_result():
    layer = tp.Linear(128, 64)
    layer.initialize_dummy_parameters()
    seen = []

    def f(x):
        y = layer(x)
        seen.append(y.trace_tensor)
        return y

    a = tp.compile(f, args=[tp.InputInfo((4, 128), tp.float32)])
    b = tp.compile(f, args=[tp.InputInfo((8, 128), tp.float32)])
    assert a._constants[0] is b._constants[0]  # one transposed copy of the weight, not two
    x = RNG.standard_normal((4, 128)).astype(np.float32)
    assert np.allclose(np.from_dlpack(a(tp.Tensor(x))), np.from_dlpack(b(tp.Tensor(np.concatenate([x, x]))))[:4])


def int8_linear_program(rows: int, size: int = 1024):
    """(what tp.compile hoists, as (shape, dtype, producer), for a tp.Linear with int8 weight-only
    quantization (per output channel) at `rows` rows; the program checked against NumPy)."""
    layer = tp.Linear(size, size, quant_dtype=tp.int8, weight_quant_dim=0)
    weight = RNG.standard_normal((size, size)).astype(np.float32)
    scale = (np.abs(weight).max(axis=1) / 127).astype(np.float32)
    bias = RNG.standard_normal((size,)).astype(np.float32)
    layer.load_state_dict({"weight": weight, "bias": bias, "weight_scale": scale})
    seen = {}

    def f(x):
        y = layer(x)
        seen["frontier"] = [
            (tuple(t.shape), t.dtype, type(t.producer).__name__) for t in constant_frontier([y.trace_tensor])
        ]
        return y

    exe = tp.compile(f, args=[tp.InputInfo((rows, size), tp.float32)])
    x = RNG.standard_normal((rows, size)).astype(np.float32)
    # The quantized weight as tripy computes it (its division may round a few ties the other way than NumPy's).
    dequantized = np.from_dlpack(
        tp.dequantize(tp.quantize(tp.Tensor(weight), tp.Tensor(scale), tp.int8, 0), tp.Tensor(scale), tp.float32, 0)
    )
    assert np.abs(dequantized - weight).max() <= scale.max() / 2 * 1.001
    np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ dequantized.T + bias, rtol=1e-4, atol=1e-3)
    return seen["frontier"]


def test_int8_weight_of_a_one_row_product_is_hoisted_as_int8():
    # The program reads 1 byte per weight: XLA:CPU dequantizes in the product's loop (cpu_plan.widens_weight_in_loop),
    # where its one-row product reads the stored weight (jaxlib <= 0.10); later ones get the float32 [in, out] weight.
    expected = (
        [((1024, 1024), tp.int8, "Cast")]
        if _xla.matrix_vector_reads_stored_weight()
        else [((1024, 1024), tp.float32, "Permute")]
    )
    assert int8_linear_program(1) == expected


def test_int8_weight_of_a_many_row_product_is_dequantized_once():
    # Several rows would materialize the float32 weight on every call: it is made once instead ([in, out]).
    assert int8_linear_program(4) == [((1024, 1024), tp.float32, "Permute")]


def test_bfloat16_weight_cast_to_float32_stays_in_a_one_row_program():
    w16 = RNG.standard_normal((1024, 1024)).astype(np.float32).astype(tp.bfloat16.numpy_dtype)
    w = tp.Tensor(w16)
    seen = {}

    def f(x):
        y = x @ tp.transpose(tp.cast(w, tp.float32), 0, 1)
        seen[int(y.trace_tensor.shape[0])] = [(tuple(t.shape), t.dtype) for t in constant_frontier([y.trace_tensor])]
        return y

    for rows in (1, 3):
        exe = tp.compile(f, args=[tp.InputInfo((rows, 1024), tp.float32)])
        x = RNG.standard_normal((rows, 1024)).astype(np.float32)
        np.testing.assert_allclose(
            np.from_dlpack(exe(tp.Tensor(x))), x @ w16.astype(np.float32).T, rtol=1e-4, atol=1e-3
        )
    one_row = [] if _xla.matrix_vector_reads_stored_weight() else [((1024, 1024), tp.float32)]
    assert seen == {1: one_row, 3: [((1024, 1024), tp.float32)]}  # one row: the stored bfloat16 weight, as is
