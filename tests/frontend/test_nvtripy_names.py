"""nvtripy 0.1.7 names that tripy had not: tp.config, tp.types, dtype classes and categories, tp.Bounds,
Tensor.ndim, the logger's severities, tp.Stream / tp.default_stream, Module comparison and printing."""

import inspect
import io
import typing

import numpy as np
import pytest

import tripy as tp


def test_dtypes_are_classes_with_categories():
    assert isinstance(tp.float32, tp.dtype) and isinstance(tp.float32, type)
    for dt in (tp.float32, tp.float16, tp.bfloat16, tp.float8):
        assert issubclass(dt, tp.floating) and not issubclass(dt, tp.integer)
    for dt in (tp.int4, tp.int8, tp.int32, tp.int64):
        assert issubclass(dt, tp.integer) and not issubclass(dt, tp.floating)
    assert not issubclass(tp.bool, (tp.integer, tp.floating))
    out = tp.ones((2,), dtype=tp.float16) * 2
    assert issubclass(out.dtype, tp.floating)
    assert [
        dt.shortname
        for dt in (tp.float32, tp.float16, tp.bfloat16, tp.float8, tp.int4, tp.int8, tp.int32, tp.int64, tp.bool)
    ] == ["f32", "f16", "bf16", "f8", "i4", "i8", "i32", "i64", "b"]
    assert str(tp.float32) == repr(tp.float32) == "float32" and tp.int4.itemsize == 0.5


def test_config_enable_input_validation_turns_argument_checks_off():
    assert tp.config.enable_input_validation is True
    assert tp.config.timing_cache_file_path and tp.config.extra_error_information == []
    with pytest.raises(tp.TripyException, match="argument 'dim' must be int"):
        tp.softmax(tp.ones((2, 2)), "0")
    tp.config.enable_input_validation = False
    try:
        with pytest.raises(Exception) as e:  # not caught at the call: fails inside, not with the check's report
            tp.softmax(tp.ones((2, 2)), "0")
        assert "argument 'dim' must be int" not in str(e.value)
    finally:
        tp.config.enable_input_validation = True


def test_types_aliases():
    assert tp.DimensionSize in typing.get_args(tp.types.IntLike) and int in typing.get_args(tp.types.IntLike)
    assert tp.Tensor in typing.get_args(tp.types.TensorLike)
    assert typing.get_args(tp.types.ShapeLike) == (tp.types.IntLike,)


def test_bounds_and_ndim():
    info = tp.InputInfo(((1, 2, 3), 4), dtype=tp.float32)
    assert info.shape_bounds == tp.Bounds(min=(1, 4), opt=(2, 4), max=(3, 4))
    assert not info.shape_bounds.is_static() and tp.Bounds((2,), (2,), (2,)).is_static()
    assert tp.ones((2, 3, 4)).ndim == 3 and tp.Tensor(1.0).ndim == 0


def _captured(fn):
    old, tp.logger.stream = tp.logger.stream, io.StringIO()
    try:
        fn()
        return tp.logger.stream.getvalue()
    finally:
        tp.logger.stream = old


def test_logger_severities_as_nvtripy():
    assert tp.logger.verbosity == {"info", "warning", "error"}  # nvtripy's default: "info"

    def log_all():
        tp.logger.verbose("v")
        tp.logger.info("i")
        tp.logger.warning("w")
        tp.logger.error("e")
        tp.logger.log("direct", "warning")

    assert _captured(log_all) == "[I] i\n[W] w\n[E] e\n[W] direct\n"
    with tp.logger.use_verbosity("verbose"):
        assert _captured(log_all).startswith("[V] v\n[I] i\n")
    with tp.logger.use_verbosity("error"):
        assert _captured(log_all) == "[E] e\n"

    def once():
        for _ in range(3):
            tp.logger.warning("only once", mode="once")
        with tp.logger.indent():
            tp.logger.info("a\nb")

    assert _captured(once) == "[W] only once\n[I]     a\n    b\n"
    with tp.logger.use_verbosity("ir"):
        assert {"trace", "flat_ir", "mlir"} <= tp.logger.verbosity
    with pytest.raises(tp.TripyException, match="Unknown verbosity 'loud'"):
        tp.logger.log("x", "loud")
    with pytest.raises(AttributeError, match="Logger has no attribute: 'shout'"):
        tp.logger.shout("x")


def test_streams():
    a, b = tp.Stream(), tp.Stream()
    assert a != b and a == a
    assert tp.default_stream() is tp.default_stream()
    with pytest.raises(tp.TripyException, match="priority must be 0"):
        tp.Stream(priority=1)
    exe = tp.compile(lambda x: x * 2, args=[tp.InputInfo((2,), tp.float32)])
    assert exe.stream is tp.default_stream()
    exe.stream = a
    out = exe(tp.Tensor([1.0, 2.0]))
    exe.stream.synchronize()
    assert exe.stream is a and out.tolist() == [2.0, 4.0]
    with pytest.raises(tp.TripyException, match="must be a tripy.Stream"):
        exe.stream = "stream"


def test_modules_compare_field_by_field_and_print_as_nvtripy():
    assert tp.Linear(2, 3) == tp.Linear(2, 3)
    assert tp.Linear(2, 3) != tp.Linear(2, 4) and tp.Linear(2, 3) != tp.LayerNorm(3)
    a, b = tp.Linear(2, 3), tp.Linear(2, 3)
    a.initialize_dummy_parameters()
    b.initialize_dummy_parameters()
    assert a == b and a != tp.Linear(2, 3)
    b.weight = tp.Tensor(np.zeros((3, 2), np.float32))
    assert a != b
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    assert str(tp.Sequential(tp.Linear(2, 3))) == (
        "Sequential(\n"
        "    0: Module = Linear(\n"
        "        weight: Parameter = (shape=(3, 2), dtype=float32),\n"
        "        bias: Parameter = (shape=(3,), dtype=float32),\n"
        "    ),\n"
        ")"
    )


def test_logger_per_path_verbosity():
    old = tp.logger.verbosity
    try:
        tp.logger.verbosity = {"backend": "cache", "frontend": {"verbose"}}
        assert {"cache", "verbose", "info"} <= tp.logger.verbosity
        import tripy_backend.memory as backend_module
        import tripy_frontend.ops.add as frontend_module

        def log_from(module, verbosity):  # run a logging call as code of `module` would
            exec(
                f"from tripy_flatir.logging import logger\nlogger.{verbosity}('{verbosity} from {module.__name__}')",
                dict(vars(module)),
            )

        text = _captured(
            lambda: (
                tp.logger.verbose("user code"),
                log_from(frontend_module, "verbose"),
                log_from(backend_module, "verbose"),
                log_from(backend_module, "info"),
            )
        )
        # A path's entry replaces the default there: the backend logs only "cache" messages.
        assert text == "[V] verbose from tripy_frontend.ops.add\n"
        saved = tp.logger.verbosity
        tp.logger.verbosity = "error"
        tp.logger.verbosity = saved  # round-trips
        assert tp.logger.verbosity.per_path == saved.per_path
    finally:
        tp.logger.verbosity = old


def test_evaluating_a_tensor_while_compiling_warns():
    def f(a):
        c = tp.ones((2,)) * 3
        print(c)
        return a + c

    with pytest.warns(tp.TripyWarning, match="is evaluated while tripy.compile traces") as caught:
        tp.compile(f, args=[tp.InputInfo((2,), tp.float32)])
    assert "A tensor created at" in str(caught[0].message) and "test_nvtripy_names.py" in str(caught[0].message)
    assert caught[0].filename == __file__  # (the warning points at the user's line that made the tensor)


def test_compile_with_nested_input_infos():
    def f(a, b, scale=2.0, *, c):
        return (a["x"] + b[0] * b[1]) * scale - c[0]["y"]

    info = tp.InputInfo(((1, 2, 4),), tp.float32)
    exe = tp.compile(f, args=[{"x": info}, [info, info]], kwargs={"c": ({"y": info},)})
    assert list(exe.input_infos) == ["a_x", "b_0", "b_1", "c_0_y"]
    x, y, z, w = (np.arange(3, dtype=np.float32) + k for k in range(4))
    out = exe({"x": tp.Tensor(x)}, [tp.Tensor(y), tp.Tensor(z)], c=({"y": tp.Tensor(w)},))
    assert np.allclose(np.asarray(out), (x + y * z) * 2.0 - w)
    with pytest.raises(tp.TripyException, match="argument 'b' must have the structure it was compiled with"):
        exe({"x": tp.Tensor(x)}, [tp.Tensor(y)], c=({"y": tp.Tensor(w)},))


def test_compile_containers_with_constants():
    # nvtripy 0.1.7's test_compile_nested_list_input_info / test_compile_mixed_containers_and_constants: leaves
    # that are not InputInfos are baked in; a call passes the same containers (constants again, or left out).
    exe = tp.compile(lambda d: d["x"] * d["s"], args=[{"x": tp.InputInfo((2, 3), tp.float32), "s": 2.0}])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(np.asarray(exe({"x": tp.Tensor(x), "s": 2.0})), x * 2)
    assert np.array_equal(np.asarray(exe({"x": tp.Tensor(x)})), x * 2)

    def f(regular, data_dict, data_list, constant):
        return regular + data_dict["x"] + data_dict["y"] + data_list[0] + data_list[1][0] + data_list[1][1] + constant

    info = tp.InputInfo((2, 3), tp.float32)
    exe = tp.compile(
        f, args=[info, {"x": info, "y": tp.zeros((2, 3))}, [info, [info, tp.ones((2, 3)) * 3]], tp.ones((2, 3)) * 5]
    )
    assert list(exe.input_infos) == ["regular", "data_dict_x", "data_list_0", "data_list_1_0"]
    ones = tp.ones((2, 3)).eval()
    out = exe(ones, {"x": ones, "y": tp.zeros((2, 3))}, [ones, [ones, tp.ones((2, 3)) * 3]])
    assert np.array_equal(np.asarray(out), np.full((2, 3), 12.0, np.float32))
    with pytest.raises(tp.TripyException, match="argument 'data_dict' must have the structure it was compiled with"):
        exe(ones, {"x": ones, "z": ones}, [ones, [ones]])


def test_compile_with_tuple_return_annotations():
    def f(a: tp.Tensor) -> typing.Tuple[tp.Tensor, tp.Tensor]:
        return a + 1, a * 2

    exe = tp.compile(f, args=[tp.InputInfo((2,), tp.float32)])
    one, two = exe(tp.Tensor([1.0, 2.0]))
    assert one.tolist() == [2.0, 3.0] and two.tolist() == [2.0, 4.0]
    assert inspect.signature(exe).return_annotation == typing.Tuple[tp.Tensor, tp.Tensor]
    # nvtripy's test_compile_preserves_sequence_for_single_output
    single = tp.compile(lambda a: [tp.relu(a)], args=[tp.InputInfo((2,), tp.float32)])
    assert inspect.signature(single).return_annotation == typing.Tuple[tp.Tensor]
    [out] = single(tp.Tensor([-1.0, 2.0]))
    assert out.tolist() == [0.0, 2.0] and repr(single).endswith("-> Tuple[Tensor]")
