"""tp.compile, tp.InputInfo, tp.NamedDimension and the tp.Executable call interface: runtime inputs vs
baked-in values, argument names and binding, return values, introspection, and the error reports."""

import inspect
import re

import numpy as np
import pytest

import tripy as tp


def _line_of(marker):
    with open(__file__) as f:
        lines = f.read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if marker in line and "_line_of(" not in line)


def _points_here(err, marker):
    assert f"{__file__}:{_line_of(marker)}" in str(err.value), str(err.value)


# ---- InputInfo / NamedDimension ---------------------------------------------------------------------------
def test_input_info_bounds():
    info = tp.InputInfo(shape=(1, (2, 4, 8), 3), dtype=tp.float32)
    assert info.shape_bounds.min == (1, 2, 3)
    assert info.shape_bounds.opt == (1, 4, 3)
    assert info.shape_bounds.max == (1, 8, 3)
    assert info.dtype is tp.float32 and info.dimension_names == {}
    assert str(info) == "InputInfo(shape=(1, (2, 4, 8), 3), dtype=float32)"
    assert tp.InputInfo((2, 3), tp.int32).shape_bounds.is_static()


def test_input_info_named_dimensions():
    batch = tp.NamedDimension("batch", 1, 4, 8)
    assert batch.bounds == (1, 4, 8) and batch.name == "batch"
    info = tp.InputInfo((batch, 3, batch), tp.float16)
    assert info.dimension_names == {0: "batch", 2: "batch"}
    assert info.shape_bounds.max == (8, 3, 8)
    assert "batch=(1, 4, 8)" in str(info)


@pytest.mark.parametrize(
    "shape,message",
    [
        (((4, 2, 8),), "bounds (min=4, opt=2, max=8) must satisfy min <= opt <= max"),
        (((1, 2),), "must be an int or a (min, opt, max) triple, but has 2 entries"),
        ((-1, 3), "the minimum -1 is negative"),
        ((2.5, 3), "must be an int, a (min, opt, max) triple or a tripy.NamedDimension, but got float"),
        (((1, 2.0, 3),), "bounds must be ints, but got float"),
        ("abc", "shape must be a sequence"),
    ],
)
def test_input_info_rejects_bad_shapes(shape, message):
    with pytest.raises(tp.TripyException, match=re.escape(message)) as e:
        tp.InputInfo(shape, tp.float32)  # MARK-info
    _points_here(e, "MARK-info")


def test_input_info_rejects_bad_dtype():
    with pytest.raises(tp.TripyException, match="dtype must be a tripy.dtype"):
        tp.InputInfo((2,), np.float32)


def test_named_dimension_rejects_bad_bounds():
    with pytest.raises(tp.TripyException, match=re.escape("min <= opt <= max")):
        tp.NamedDimension("b", 4, 2, 1)
    with pytest.raises(tp.TripyException, match="non-empty string"):
        tp.NamedDimension("", 1, 2, 3)


def test_named_dimension_with_different_bounds_is_refused_at_compile():
    a = tp.NamedDimension("n", 1, 2, 4)
    b = tp.NamedDimension("n", 1, 2, 8)
    with pytest.raises(
        tp.TripyException,
        match=re.escape("the named dimension 'n' has bounds (1, 2, 4) for dim 0 of 'x' but (1, 2, 8) for dim 0 of 'y'"),
    ) as e:
        tp.compile(lambda x, y: x + y, args=[tp.InputInfo((a,), tp.float32), tp.InputInfo((b,), tp.float32)])  # MARK-nd
    _points_here(e, "MARK-nd")


# ---- runtime inputs and baked-in values -----------------------------------------------------------------
def test_only_input_infos_are_runtime_inputs():
    bias = tp.Tensor(np.arange(3, dtype=np.float32))

    def fn(x, b, scale, offset=0.0):
        return x * scale + b + offset

    exe = tp.compile(fn, args=[tp.InputInfo((2, 3), tp.float32), bias, 3.0], kwargs={"offset": 1.0})
    assert list(exe.input_infos) == ["x"]
    assert list(inspect.signature(exe).parameters) == ["x"]
    x = np.ones((2, 3), np.float32)
    assert np.array_equal(np.from_dlpack(exe(tp.Tensor(x))), x * 3 + np.arange(3) + 1)


def test_baked_tensors_are_arguments_not_literals():
    weight = np.linspace(-1, 1, 64 * 64, dtype=np.float32).reshape(64, 64)
    w = tp.Tensor(weight)
    exe = tp.compile(lambda x, w: x @ w, args=[tp.InputInfo((2, 64), tp.float32), w])
    text = exe.stablehlo
    assert "tensor<64x64xf32>" in re.search(r"func.func public @main\((.*?)\)", text).group(1)  # an argument
    assert "dense<" not in text or len(text) < 5000  # the data is not printed into the program
    x = np.ones((2, 64), np.float32)
    assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ weight, rtol=1e-4, atol=1e-4)


def test_lazy_baked_tensor_and_python_values():
    exe = tp.compile(lambda x, n: x + tp.full((3,), float(n)), args=[tp.InputInfo((3,), tp.float32), 5])
    assert exe(tp.Tensor([1.0, 2.0, 3.0])).tolist() == [6.0, 7.0, 8.0]


def test_keyword_runtime_inputs_follow_the_parameter_order():
    def fn(a, b, c):
        return a * 100.0 + b * 10.0 + c

    info = tp.InputInfo((1,), tp.float32)
    exe = tp.compile(fn, args=[info], kwargs={"c": info, "b": info})
    assert list(exe.input_infos) == ["a", "b", "c"]
    one, two, three = tp.Tensor([1.0]), tp.Tensor([2.0]), tp.Tensor([3.0])
    assert exe(one, two, three).tolist() == [123.0]
    assert exe(one, c=three, b=two).tolist() == [123.0]
    assert exe(c=three, a=one, b=two).tolist() == [123.0]


def test_variadic_function():
    exe = tp.compile(lambda *ts: ts[0] - ts[1], args=[tp.InputInfo((2,), tp.float32), tp.InputInfo((2,), tp.float32)])
    assert list(exe.input_infos) == ["ts_0", "ts_1"]
    assert exe(tp.Tensor([5.0, 5.0]), tp.Tensor([1.0, 2.0])).tolist() == [4.0, 3.0]


def test_compile_a_module():
    class Scale(tp.Module):
        def __init__(self):
            super().__init__()
            self.weight = tp.Tensor([2.0, 3.0])

        def forward(self, x):
            return x * self.weight

    mod = Scale()
    exe = tp.compile(mod, args=[tp.InputInfo(((1, 2, 4), 2), tp.float32)])
    assert list(exe.input_infos) == ["x"]
    assert exe(tp.ones((3, 2))).tolist() == [[2.0, 3.0]] * 3

    linear = tp.Linear(4, 2)
    linear.initialize_dummy_parameters()
    exe = tp.compile(linear, args=[tp.InputInfo(((1, 2, 8), 4), tp.float32)])
    x = np.ones((5, 4), np.float32)
    expected = x @ np.from_dlpack(linear.weight).T + np.from_dlpack(linear.bias)
    assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), expected, rtol=1e-5, atol=1e-5)


# ---- results -------------------------------------------------------------------------------------------
def test_tuple_and_list_results_become_tuples():
    info = tp.InputInfo((2,), tp.float32)
    exe = tp.compile(lambda x: (x + 1.0, x * 2.0), args=[info])
    a, b = exe(tp.Tensor([1.0, 2.0]))
    assert a.tolist() == [2.0, 3.0] and b.tolist() == [2.0, 4.0]
    out = tp.compile(lambda x: [x, tp.sum(x)], args=[info])(tp.Tensor([1.0, 2.0]))
    assert isinstance(out, tuple) and out[1].tolist() == 3.0


def test_results_are_ordinary_tensors():
    exe = tp.compile(lambda x: x * 2.0, args=[tp.InputInfo(((1, 2, 4),), tp.float32)])
    out = exe(tp.Tensor([1.0, 2.0]))  # MARK-result
    assert out.is_evaluated and out.dtype is tp.float32 and out.shape == (2,)
    assert (out + 1.0).tolist() == [3.0, 5.0]
    assert exe(out).tolist() == [4.0, 8.0]  # fed back in
    assert out.stack_info.user_frame.line == _line_of("MARK-result")


def test_unevaluated_arguments_are_evaluated():
    exe = tp.compile(lambda x: x + 1.0, args=[tp.InputInfo((2,), tp.float32)])
    assert exe(tp.ones((2,)) * 3.0).tolist() == [4.0, 4.0]


def test_returning_a_non_tensor_is_an_error():
    with pytest.raises(
        tp.TripyException,
        match="must return a tripy.Tensor or a non-empty tuple or list of them, but it returned a tuple of Tensor, int",
    ) as e:
        tp.compile(lambda x: (x, 1), args=[tp.InputInfo((2,), tp.float32)])  # MARK-ret
    _points_here(e, "MARK-ret")


def test_printing_a_runtime_value_while_tracing_is_an_error():
    def fn(x):
        print(x)  # MARK-print
        return x

    with pytest.raises(tp.TripyException, match="Cannot evaluate a tensor while tripy.compile") as e:
        tp.compile(fn, args=[tp.InputInfo((2,), tp.float32)])
    _points_here(e, "MARK-print")


# ---- call errors ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def add_exe():
    info = tp.InputInfo((2,), tp.float32)
    return tp.compile(lambda x, y: x + y, args=[info, info])


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda exe, t: exe(t), "Missing input(s): 'y'."),
        (lambda exe, t: exe(t, t, t), "The executable takes 2 input(s), but 3 positional arguments were given."),
        (lambda exe, t: exe(t, z=t), "The executable has no input named 'z'."),
        (lambda exe, t: exe(t, x=t), "Input 'x' was given both positionally and by keyword."),
        (lambda exe, t: exe(t, yy=t), "The executable has no input named 'yy'. Did you mean 'y'?"),
        (lambda exe, t: exe(t, np.ones(2, np.float32)), "Input 'y' must be a tripy.Tensor, but got ndarray."),
    ],
)
def test_bad_calls(add_exe, call, message):
    t = tp.Tensor([1.0, 2.0])
    with pytest.raises(tp.TripyException, match=re.escape(message)) as e:
        call(add_exe, t)
    assert "The executable's inputs are: x: InputInfo(shape=(2,), dtype=float32), y: " in str(e.value)


def test_call_error_names_the_callers_line(add_exe):
    with pytest.raises(tp.TripyException) as e:
        add_exe(tp.Tensor([1.0, 2.0]), tp.Tensor([1.0, 2.0, 3.0]))  # MARK-call
    _points_here(e, "MARK-call")
    assert "Input 'y' has shape [3]: dim 0 is 3, but it must be 2 (a static dim)." in str(e.value)


def test_introspection(add_exe):
    assert {n: str(i) for n, i in add_exe.input_infos.items()} == {
        "x": "InputInfo(shape=(2,), dtype=float32)",
        "y": "InputInfo(shape=(2,), dtype=float32)",
    }
    assert str(inspect.signature(add_exe)).startswith("(x: ")
    assert repr(add_exe) == (
        "Executable(x: InputInfo(shape=(2,), dtype=float32), y: InputInfo(shape=(2,), dtype=float32)) -> Tensor"
    )
    assert "stablehlo.add" in add_exe.stablehlo and "func.func public @main" in add_exe.stablehlo


def test_executable_cannot_be_constructed_directly():
    with pytest.raises(tp.TripyException, match="cannot be created directly"):
        tp.Executable()


def test_compile_argument_errors():
    with pytest.raises(tp.TripyException, match="func must be a function or a tripy.Module"):
        tp.compile(3, args=[])
    with pytest.raises(tp.TripyException, match="args/kwargs do not match the signature"):
        tp.compile(lambda x: x, args=[tp.InputInfo((1,), tp.float32), tp.InputInfo((1,), tp.float32)])
    with pytest.raises(tp.TripyException, match="optimization_level must be an int in"):
        tp.compile(lambda x: x, 9, args=[tp.InputInfo((1,), tp.float32)])


def test_a_forgotten_input_info_is_pointed_out():
    # A tensor instead of tp.InputInfo is baked in (nvtripy's semantics), with a warning when the executable
    # then takes no inputs, and the hint again when it is called with the tensor.
    with pytest.warns(tp.TripyWarning) as caught:
        exe = tp.compile(lambda x: x * 2.0, args=[tp.ones((2, 3))])
    warned = str(caught[0].message)
    assert caught[0].filename == __file__  # (at the user's call of tp.compile)
    assert "no argument is a tp.InputInfo" in warned and "tp.InputInfo((2, 3), tp.float32)" in warned
    with pytest.raises(
        tp.TripyException,
        match=r"(?s)takes 0 input\(s\).*inputs are: none.*'x' was given to "
        r"tripy.compile as a tripy.Tensor.*tp.InputInfo\(\(2, 3\), tp.float32\)",
    ):
        exe(tp.ones((2, 3)))
    # a shape where the InputInfo belongs: tripy's error with the hint, not the function's raw TypeError
    with pytest.raises(
        tp.TripyException,
        match=r"(?s)raised TypeError: can't multiply sequence.*"
        r"'x' was given to tripy.compile as \(2, 3\).*tp.InputInfo\(\(2, 3\)",
    ):
        tp.compile(lambda x: x * 2.0, args=[(2, 3)])
    with pytest.raises(tp.TripyException, match=r"(?s)must return a tripy.Tensor.*tp.InputInfo\(\(2, 3\)"):
        tp.compile(lambda x: x * 2, args=[(2, 3)])
    with pytest.warns(tp.TripyWarning) as caught:
        tp.compile(lambda x: tp.Tensor(x) * 2, args=[np.ones((2, 3), np.int32)])
    warned = str(caught[0].message)
    assert "'x' was given to tripy.compile as a NumPy array" in warned and "tp.InputInfo((2, 3), tp.int32)" in warned


def test_results_are_freed_as_soon_as_they_are_dropped():
    """A compiled call's result holds its stored data without a reference cycle, so a loop that drops
    its results frees their buffers right away rather than leaving them to the cycle collector."""
    import gc
    import weakref

    exe = tp.compile(lambda x: x * 2.0, args=[tp.InputInfo((3,), tp.float32)])
    x = tp.Tensor([1.0, 2.0, 3.0])
    exe(x)  # the first call for a signature takes the general path; later ones the fast path
    gc.disable()
    try:
        out = exe(x)
        ref = weakref.ref(out.trace_tensor)
        op = out.trace_tensor.producer
        assert op.outputs == [out.trace_tensor] and "storage(shape=[3]" in str(op)
        del out, op
        assert ref() is None
    finally:
        gc.enable()


def test_optimization_level_selects_xla_cpu_options_and_survives_save_load(tmp_path):
    import numpy as np

    from tripy_backend import _xla, cpu_plan

    if _xla.has_classic_cpu_runtime():  # (the levels choose LLVM's -O2 or -O3 there)
        assert cpu_plan.compile_options("cpu", 3) != cpu_plan.compile_options("cpu", 5)
        assert cpu_plan.fingerprint("cpu", 0, 3) != cpu_plan.fingerprint("cpu", 0, 5)

    def mlp(x, w):
        return tp.sum(tp.tanh(x @ w) * 2.0, dim=1)

    w = tp.Tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    x = np.linspace(0, 1, 8, dtype=np.float32).reshape(2, 4)
    expected = np.sum(np.tanh(x @ np.from_dlpack(w)) * 2.0, axis=1)
    for level in (0, 3, 5):
        exe = tp.compile(mlp, optimization_level=level, args=[tp.InputInfo(((1, 2, 4), 4), tp.float32), w])
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), expected, atol=1e-6)
        path = tmp_path / f"mlp{level}.tpymodel"
        exe.save(str(path))
        loaded = tp.Executable.load(str(path))
        assert loaded._program.optimization_level == level
        assert np.allclose(np.from_dlpack(loaded(tp.Tensor(x))), expected, atol=1e-6)
