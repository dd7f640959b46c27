"""Dtype tests generated from the ops' dtype declarations (``@public_api(dtype_constraints=...)`` and
``@dtype_rules``): for every declared op and every tripy dtype, an allowed dtype runs end to end and
matches NumPy (and the declared result dtype), and a dtype that is not allowed is rejected at the call
with a TripyException that names it. A declared op needs an entry in SAMPLES below (the test fails
otherwise), so a new op is covered as soon as it declares its dtypes."""

from __future__ import annotations

import inspect
import itertools
import math
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pytest

import tripy as tp
from tripy_frontend.export import RETURN
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY

ALL = [tp.float32, tp.float16, tp.bfloat16, tp.float8, tp.int4, tp.int8, tp.int32, tp.int64, tp.bool]

X = [[1, 2, 3], [4, 1, 2]]  # small positive values: exact in every dtype (int4 and float8 included)
Y = [[2, 1, 3], [1, 2, 2]]
NEG = [[-1, 2, -3], [4, -1, 0]]
MASK = [[1, 0, 1], [0, 1, 0]]
GRID = (np.arange(16).reshape(1, 1, 4, 4) % 4 + 1).tolist()


def t(dtype: Any, data: Any = X) -> tp.Tensor:
    """A tensor of `dtype` holding `data` (nonzero values are True for bool)."""
    return tp.Tensor(np.array(data).astype(dtype.numpy_dtype))


def A(*args: Any, **kwargs: Any) -> Tuple[tuple, dict]:
    return args, kwargs


def np_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_topk(x: np.ndarray, k: int, dim: int) -> Tuple[np.ndarray, np.ndarray]:
    idx = np.argsort(-x, axis=dim, kind="stable")[:, :k]
    return np.take_along_axis(x, idx, axis=dim), idx


TABLE = np.arange(8).reshape(4, 2)


def embedding() -> tp.Embedding:
    module = tp.Embedding(4, 2)
    module.load_state_dict({"weight": TABLE.astype(np.float32)})
    return module


erf = np.vectorize(math.erf, otypes=[np.float64])
unary = lambda d: A(t(d.T1))  # noqa: E731
binary = lambda d: A(t(d.T1), t(d.T1, Y))  # noqa: E731
reduce_dim1 = lambda d: A(t(d.T1), dim=1)  # noqa: E731
like = lambda d: A(t(d.T1), d.T2)  # noqa: E731
Build = Callable[[SimpleNamespace], Tuple[tuple, dict]]

# op name (tripy.<name>, or Tensor.<method> for methods that are not also public functions) ->
# (sample arguments built from the dtype bound to each type variable (d.T1, d.T2), NumPy reference
# computed from the same arguments with tensors as float64/int64/bool arrays, or None to check only
# that the op runs and gives the declared dtype).
SAMPLES: Dict[str, Tuple[Build, Optional[Callable[..., Any]]]] = {
    # elementwise
    "exp": (unary, np.exp),
    "log": (unary, np.log),
    "sin": (unary, np.sin),
    "cos": (unary, np.cos),
    "tanh": (unary, np.tanh),
    "sqrt": (unary, np.sqrt),
    "rsqrt": (unary, lambda x: 1 / np.sqrt(x)),
    "sigmoid": (unary, lambda x: 1 / (1 + np.exp(-x))),
    "silu": (unary, lambda x: x / (1 + np.exp(-x))),
    "gelu": (unary, lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
    "abs": (lambda d: A(t(d.T1, NEG)), np.abs),
    "relu": (lambda d: A(t(d.T1, NEG)), lambda x: np.maximum(x, 0)),
    "Tensor.__neg__": (lambda d: A(t(d.T1, NEG)), np.negative),
    "Tensor.__invert__": (unary, np.invert),
    "maximum": (binary, np.maximum),
    "minimum": (binary, np.minimum),
    "Tensor.__add__": (binary, np.add),
    "Tensor.__radd__": (binary, lambda a, b: b + a),
    "Tensor.__sub__": (binary, np.subtract),
    "Tensor.__rsub__": (binary, lambda a, b: b - a),
    "Tensor.__mul__": (binary, np.multiply),
    "Tensor.__rmul__": (binary, lambda a, b: b * a),
    "Tensor.__truediv__": (binary, np.true_divide),
    "Tensor.__rtruediv__": (binary, lambda a, b: b / a),
    "Tensor.__floordiv__": (binary, np.floor_divide),
    "Tensor.__rfloordiv__": (binary, lambda a, b: b // a),
    "Tensor.__mod__": (binary, np.mod),
    "Tensor.__rmod__": (binary, lambda a, b: b % a),
    "Tensor.__pow__": (binary, np.power),
    "Tensor.__rpow__": (binary, lambda a, b: b**a),
    "Tensor.__and__": (binary, np.bitwise_and),
    "Tensor.__rand__": (binary, np.bitwise_and),
    "Tensor.__or__": (binary, np.bitwise_or),
    "Tensor.__ror__": (binary, np.bitwise_or),
    "Tensor.__xor__": (binary, np.bitwise_xor),
    "Tensor.__rxor__": (binary, np.bitwise_xor),
    "Tensor.__eq__": (binary, np.equal),
    "Tensor.__ne__": (binary, np.not_equal),
    "Tensor.__lt__": (binary, np.less),
    "Tensor.__le__": (binary, np.less_equal),
    "Tensor.__gt__": (binary, np.greater),
    "Tensor.__ge__": (binary, np.greater_equal),
    "Tensor.__matmul__": (lambda d: A(t(d.T1), t(d.T1, [[1, 2], [0, 1], [2, 1]])), np.matmul),
    "Tensor.__rmatmul__": (
        lambda d: A(t(d.T1), np.array([[1, 2], [0, 1], [2, 1]]).astype(d.T1.numpy_dtype)),
        lambda a, b: b @ a,
    ),
    "where": (lambda d: A(t(d.T2, MASK), t(d.T1), t(d.T1, Y)), np.where),
    "masked_fill": (lambda d: A(t(d.T1), t(d.T2, MASK), 1), lambda x, m, v: np.where(m, v, x)),
    "tril": (lambda d: A(t(d.T1, X + [Y[0]])), np.tril),
    "triu": (lambda d: A(t(d.T1, X + [Y[0]])), np.triu),
    # reductions
    "sum": (reduce_dim1, lambda x, dim: np.sum(x, axis=dim)),
    "prod": (reduce_dim1, lambda x, dim: np.prod(x, axis=dim)),
    "max": (reduce_dim1, lambda x, dim: np.max(x, axis=dim)),
    "min": (reduce_dim1, lambda x, dim: np.min(x, axis=dim)),
    "mean": (reduce_dim1, lambda x, dim: np.mean(x, axis=dim)),
    "var": (reduce_dim1, lambda x, dim: np.var(x, axis=dim, ddof=1)),
    "all": (lambda d: A(t(d.T1, MASK), dim=1), lambda x, dim: np.all(x, axis=dim)),
    "any": (lambda d: A(t(d.T1, MASK), dim=1), lambda x, dim: np.any(x, axis=dim)),
    "argmax": (reduce_dim1, lambda x, dim: np.argmax(x, axis=dim)),
    "argmin": (reduce_dim1, lambda x, dim: np.argmin(x, axis=dim)),
    "topk": (lambda d: A(t(d.T1), 2, 1), np_topk),
    "cumsum": (lambda d: A(t(d.T1), 1), lambda x, dim: np.cumsum(x, axis=dim)),
    "softmax": (lambda d: A(t(d.T1), 1), np_softmax),
    "allclose": (lambda d: A(t(d.T1), t(d.T1)), lambda a, b: True),
    "equal": (binary, lambda a, b: bool(np.array_equal(a, b))),
    "outer": (lambda d: A(t(d.T1, [1, 2]), t(d.T1, [3, 1, 2])), np.outer),
    # nn
    "avgpool": (
        lambda d: A(t(d.T1, GRID), (2, 2), stride=(2, 2)),
        lambda x, k, stride: x.reshape(1, 1, 2, 2, 2, 2).mean(axis=(3, 5)),
    ),
    "maxpool": (
        lambda d: A(t(d.T1, GRID), (2, 2), stride=(2, 2)),
        lambda x, k, stride: x.reshape(1, 1, 2, 2, 2, 2).max(axis=(3, 5)),
    ),
    "resize": (
        lambda d: A(t(d.T1), "nearest", output_shape=(4, 6)),
        lambda x, mode, output_shape: np.repeat(np.repeat(x, 2, 0), 2, 1),
    ),
    "quantize": (
        lambda d: A(t(d.T1), 0.5, d.T2),
        lambda x, scale, dtype: np.clip(x / scale, -8, 7) if dtype == tp.int4 else x / scale,
    ),
    "dequantize": (lambda d: A(t(d.T1), 0.5, d.T2), lambda x, scale, dtype: x * scale),
    # data types, shapes and data movement
    "cast": (lambda d: A(t(d.T1), d.T2), lambda x, dtype: x != 0 if dtype == tp.bool else x),
    "reshape": (lambda d: A(t(d.T1), (3, 2)), np.reshape),
    "permute": (lambda d: A(t(d.T1), (1, 0)), np.transpose),
    "transpose": (lambda d: A(t(d.T1), 0, 1), np.swapaxes),
    "flatten": (unary, np.ravel),
    "squeeze": (lambda d: A(t(d.T1, [X]), 0), np.squeeze),
    "unsqueeze": (lambda d: A(t(d.T1), 0), np.expand_dims),
    "expand": (lambda d: A(t(d.T1, [[1], [2]]), (2, 3)), np.broadcast_to),
    "flip": (lambda d: A(t(d.T1), dim=1), lambda x, dim: np.flip(x, dim)),
    "split": (lambda d: A(t(d.T1), 3, dim=1), lambda x, n, dim: tuple(np.split(x, n, axis=dim))),
    "repeat": (lambda d: A(t(d.T1), 2, 0), lambda x, n, dim: np.repeat(x, n, axis=dim)),
    "pad": (lambda d: A(t(d.T1), ((1, 0), (0, 1))), np.pad),
    "gather": (lambda d: A(t(d.T1), 1, t(d.T2, [2, 0])), lambda x, dim, index: np.take(x, index, axis=dim)),
    "Tensor.__getitem__": (lambda d: A(t(d.T1), (slice(None), slice(1, None))), lambda x, index: x[index]),
    "concatenate": (lambda d: A([t(d.T1), t(d.T1, Y)], 1), np.concatenate),
    "stack": (lambda d: A([t(d.T1), t(d.T1, Y)], 1), lambda ts, dim: np.stack(ts, axis=dim)),
    "copy": (lambda d: A(t(d.T1), tp.device("cpu")), lambda x, device: x),
    "shard": (lambda d: A(t(d.T1), tp.Sharding(tp.Mesh((1,), ("x",)), (None, "x"))), lambda x, sharding: x),
    # creation
    "full": (lambda d: A((2, 3), 1, d.T1), lambda shape, value, dtype: np.full(shape, value)),
    "ones": (lambda d: A((2, 3), d.T1), lambda shape, dtype: np.ones(shape)),
    "zeros": (lambda d: A((2, 3), d.T1), lambda shape, dtype: np.zeros(shape)),
    "full_like": (lambda d: A(t(d.T1), 1, d.T2), lambda x, value, dtype: np.full(x.shape, value)),
    "ones_like": (like, lambda x, dtype: np.ones(x.shape)),
    "zeros_like": (like, lambda x, dtype: np.zeros(x.shape)),
    "iota": (lambda d: A((2, 3), 1, d.T1), lambda shape, dim, dtype: np.broadcast_to(np.arange(3), shape)),
    "iota_like": (lambda d: A(t(d.T1), 1, d.T2), lambda x, dim, dtype: np.broadcast_to(np.arange(3), x.shape)),
    "arange": (lambda d: A(0, 4, dtype=d.T1), lambda start, stop, dtype: np.arange(start, stop)),
    # modules (their forward)
    "Embedding.forward": (lambda d: A(embedding(), t(d.T1, [[1, 0], [3, 3]])), lambda self, ids: TABLE[ids]),
}


# ---- what is declared ---------------------------------------------------------------------------------------
def declared_ops() -> Dict[str, Any]:
    """Every public function, Tensor method and module forward with a dtype declaration, by name (a
    method that is also a public function, like Tensor.reshape, counts once, as the function)."""
    ops: Dict[str, Any] = {}
    seen = set()
    for name in tp.__all__:
        fn: Any = getattr(tp, name)
        forward = getattr(fn, "forward", None) if inspect.isclass(fn) else None
        if forward is not None and hasattr(forward, "__tripy_dtype_constraints__"):
            ops[f"{name}.forward"] = forward
        if inspect.isfunction(fn) and hasattr(fn, "__tripy_dtype_constraints__"):
            ops[name] = fn
            seen.add(id(fn.__tripy_dtype_constraints__))
    for name, fn in TENSOR_METHOD_REGISTRY.methods.items():
        if hasattr(fn, "__tripy_dtype_constraints__") and id(fn.__tripy_dtype_constraints__) not in seen:
            ops[f"Tensor.{name}"] = fn
    return ops


DECLARED = declared_ops()


def bound_variables(fn: Any) -> List[str]:
    """The type variables bound to parameters, in declaration order."""
    out: List[str] = []
    for key, var in fn.__tripy_dtype_constraints__.items():
        if key != RETURN and var not in out:
            out.append(var)
    return out


def supported(fn: Any, bindings: Dict[str, Any]) -> bool:
    variables, exceptions = fn.__tripy_dtype_variables__, fn.__tripy_dtype_exceptions__
    if any(dt not in variables[var] for var, dt in bindings.items()):
        return False
    return not any(all(bindings.get(var) == dt for var, dt in exc.items()) for exc in exceptions)


def cases() -> List[Any]:
    """One case per (op, binding of its type variables): each variable takes every dtype while the
    others keep their first allowed dtype; ops with dtype_exceptions get every combination."""
    out = []
    for name, fn in DECLARED.items():
        variables = fn.__tripy_dtype_variables__
        names = bound_variables(fn)
        defaults = {var: variables[var][0] for var in names}
        if fn.__tripy_dtype_exceptions__:
            combos = [dict(zip(names, c)) for c in itertools.product(ALL, repeat=len(names))]
        else:
            combos = [{**defaults, var: dt} for var in names for dt in ALL if len(names) == 1 or dt != defaults[var]]
            combos = combos + ([defaults] if len(names) > 1 else [])
        for combo in combos:
            label = "-".join(f"{v}={dt}" for v, dt in combo.items())
            out.append(pytest.param(name, combo, id=f"{name}-{label}"))
    return out


# ---- the tests -------------------------------------------------------------------------------------------------
def test_every_declared_op_has_a_sample():
    missing = sorted(set(DECLARED) - set(SAMPLES))
    assert not missing, f"Add sample arguments for these ops to SAMPLES in {__file__}: {missing}"
    stale = sorted(set(SAMPLES) - set(DECLARED))
    assert not stale, f"These SAMPLES entries name no op with a dtype declaration: {stale}"


def test_declarations_are_well_formed():
    for name, fn in DECLARED.items():
        variables = fn.__tripy_dtype_variables__
        params = inspect.signature(fn).parameters
        for key, var in fn.__tripy_dtype_constraints__.items():
            assert key == RETURN or key in params, f"{name}: {key!r} is not a parameter"
            for v in var if isinstance(var, tuple) else (var,):
                assert v in variables, f"{name}: undeclared type variable {v!r}"
        for var, dts in variables.items():
            assert len(set(dts)) == len(dts) and all(d in ALL for d in dts), f"{name}: bad dtypes for {var}"


def test_most_ops_are_declared():
    assert len(DECLARED) >= 80


def as_numpy(value: Any) -> Any:
    if isinstance(value, tp.Tensor):
        return np.array(value.tolist())
    if isinstance(value, (list, tuple)) and any(isinstance(v, tp.Tensor) for v in value):
        return type(value)(as_numpy(v) for v in value)
    if isinstance(value, np.ndarray) and value.dtype.name in ("bfloat16", "float8_e4m3fn", "int4"):
        return value.astype(np.float64)
    return value


TOLERANCE = {tp.float32: 1e-5, tp.float16: 4e-3, tp.bfloat16: 3e-2, tp.float8: 0.13}


def check_output(name: str, out: Any, expected: Any, expected_dtype: Any) -> None:
    if not isinstance(out, tp.Tensor):
        assert isinstance(out, bool), f"{name}: expected a tensor or a bool, got {type(out).__name__}"
        if expected is not None:
            assert out == expected
        return
    if expected_dtype is None:  # no declared result dtype
        pass
    elif isinstance(expected_dtype, tuple):
        assert out.dtype in expected_dtype, f"{name}: result dtype {out.dtype}, declared one of {expected_dtype}"
    else:
        assert out.dtype == expected_dtype, f"{name}: result dtype {out.dtype}, declared {expected_dtype}"
    values = np.array(out.tolist(), dtype=np.float64)
    if expected is None:
        return
    expected = np.asarray(expected, dtype=np.float64)
    assert values.shape == expected.shape, f"{name}: shape {values.shape}, expected {expected.shape}"
    tol = TOLERANCE.get(out.dtype, 0)
    np.testing.assert_allclose(values, expected, rtol=tol, atol=tol, err_msg=name)


def expected_dtypes(fn: Any, bindings: Dict[str, Any], count: int) -> List[Any]:
    """The declared dtype of each result: the dtype bound to its variable, or any of the variable's dtypes."""
    spec = fn.__tripy_dtype_constraints__.get(RETURN)
    if spec is None:
        return [None] * count
    specs = spec if isinstance(spec, tuple) else (spec,) * count
    return [bindings.get(v, tuple(fn.__tripy_dtype_variables__[v])) for v in specs]


def run_case(name: str, bindings: Dict[str, Any]) -> None:
    fn = DECLARED[name]
    build, reference = SAMPLES[name]
    args, kwargs = build(SimpleNamespace(**bindings))
    if not supported(fn, bindings):
        with pytest.raises(tp.TripyException) as info:
            fn(*args, **kwargs)
        text = str(info.value)
        assert "does not support dtype" in text and any(f"dtype {dt}" in text for dt in bindings.values()), text
        assert __file__ in text, "the error should point at the caller's line"
        return
    out = fn(*args, **kwargs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    expected = None
    if reference is not None:
        expected = reference(*[as_numpy(a) for a in args], **{k: as_numpy(v) for k, v in kwargs.items()})
        expected = list(expected) if isinstance(expected, tuple) else [expected]
        assert len(expected) == len(outs), f"{name}: {len(outs)} results, expected {len(expected)}"
    for i, (o, dt) in enumerate(zip(outs, expected_dtypes(fn, bindings, len(outs)))):
        check_output(f"{name} result {i}", o, None if expected is None else expected[i], dt)


@pytest.mark.parametrize("name, bindings", cases())
def test_dtype(name, bindings):
    if name not in SAMPLES:
        pytest.fail(f"{name} declares its dtypes but has no entry in SAMPLES")
    run_case(name, bindings)


# ---- the error reports -----------------------------------------------------------------------------------------
def test_unsupported_dtype_report_names_op_argument_dtypes_and_fix():
    x = tp.Tensor([1, 2])
    with pytest.raises(tp.TripyException) as info:
        tp.exp(x)  # MARK
    text = str(info.value)
    assert "tripy.exp does not support dtype int32 for argument 'input'." in text
    assert "Supported dtypes: float32, float16, bfloat16." in text
    assert "tripy.cast(" in text
    assert "tp.exp(x)  # MARK" in text and __file__ in text


def test_shared_variable_mismatch_is_reported():
    with pytest.raises(
        tp.TripyException,
        match=r"tripy.maximum: 'lhs' and 'rhs' must have the same data type, but "
        r"got float32 and int32",
    ):
        tp.maximum(tp.Tensor([1.0]), tp.Tensor([1]))
    with pytest.raises(
        tp.TripyException,
        match=r"Operands of '\+' must have the same data type, but got int32 and "
        r"float32",
    ):
        tp.Tensor([1, 2]) + tp.Tensor([1.0, 2.0])
    with pytest.raises(
        tp.TripyException,
        match=r"tripy.concatenate: 'tensors\[0\]' and 'tensors\[2\]' must have the "
        r"same data type, but got float32 and int32",
    ):
        tp.concatenate([tp.Tensor([1.0]), tp.Tensor([2.0]), tp.Tensor([3])], 0)


def test_operators_and_dtype_values_are_checked():
    with pytest.raises(tp.TripyException, match="'~' does not support dtype float32"):
        ~tp.Tensor([1.0])
    with pytest.raises(tp.TripyException, match="tripy.quantize does not support dtype int32 for argument 'dtype'"):
        tp.quantize(tp.Tensor([1.0]), 1.0, tp.int32)


def test_python_numbers_are_not_dtype_checked():
    assert (tp.Tensor([1, 2]) + 1).tolist() == [2, 3]
    assert tp.maximum(tp.Tensor([1.0, 3.0]), 2.0).tolist() == [2.0, 3.0]
    assert tp.where(tp.Tensor([True, False]), 1.0, tp.Tensor([5.0, 6.0])).tolist() == [1.0, 6.0]


def test_sizes_from_shapes_count_as_int32_without_building_graph():
    x = tp.ones((3, 2))
    assert tp.cast(x.shape[0], tp.float32).tolist() == 3.0


def test_function_and_method_spellings_check_the_same_declaration():
    for call in (lambda t: tp.abs(t), lambda t: abs(t)):
        with pytest.raises(tp.TripyException, match="tripy.abs does not support dtype bool for argument 'input'"):
            call(tp.Tensor([True]))
    with pytest.raises(tp.TripyException, match="tripy.reshape: argument 'input' must be tripy.Tensor"):
        tp.reshape([1.0], (1,))


def test_dtype_exceptions_and_malformed_declarations():
    from tripy_frontend.export import dtype_rules

    @dtype_rules(
        {"input": "T1", "dtype": "T2", RETURN: "T2"},
        {"T1": (tp.float32, tp.float8), "T2": (tp.int4, tp.int8)},
        [{"T1": tp.float8, "T2": tp.int4}],
        name="tripy.example",
    )
    def example(input, dtype):
        return tp.cast(input, dtype)

    assert example(tp.Tensor([1.0]), tp.int4).dtype == tp.int4
    assert example(tp.cast(tp.Tensor([1.0]), tp.float8), tp.int8).dtype == tp.int8
    with pytest.raises(
        tp.TripyException,
        match="tripy.example does not support dtype float8 for argument 'input' "
        "together with dtype int4 for argument 'dtype'",
    ):
        example(tp.cast(tp.Tensor([1.0]), tp.float8), tp.int4)
    with pytest.raises(tp.TripyException, match="tripy.example does not support dtype int32 for argument 'dtype'"):
        example(tp.Tensor([1.0]), dtype=tp.int32)
    with pytest.raises(AssertionError, match="not a parameter"):
        dtype_rules({"other": "T1"}, {"T1": (tp.float32,)})(lambda input: input)
    with pytest.raises(AssertionError, match="is not declared"):
        dtype_rules({"input": "T3"}, {"T1": (tp.float32,)})(lambda input: input)


def test_a_dtype_combination_that_passed_does_not_excuse_a_later_violation():
    # DtypeRule.check remembers the dtype combinations that passed: each call is still judged on its own.
    f32, i32 = tp.Tensor([1.0]), tp.Tensor([1])
    for _ in range(2):
        assert (f32 + f32).tolist() == [2.0]
        with pytest.raises(
            tp.TripyException, match="Operands of '\\+' must have the same data type, but got float32 and int32"
        ):
            f32 + i32
    assert tp.concatenate([f32, f32], 0).tolist() == [1.0, 1.0]
    with pytest.raises(
        tp.TripyException,
        match=r"tripy.concatenate: 'tensors\[0\]' and 'tensors\[2\]' must have "
        "the same data type, but got float32 and int32",
    ):
        tp.concatenate([f32, f32, i32], 0)
