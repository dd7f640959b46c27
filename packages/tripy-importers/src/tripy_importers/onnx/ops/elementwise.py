"""Elementwise ONNX operators: arithmetic (folded on shape values), comparisons, logic, activations, casts."""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Optional

import tripy_frontend.ops.abs as _abs
import tripy_frontend.ops.cos as _cos
import tripy_frontend.ops.exp as _exp
import tripy_frontend.ops.gelu as _gelu
import tripy_frontend.ops.log as _log
import tripy_frontend.ops.maximum as _maximum
import tripy_frontend.ops.minimum as _minimum
import tripy_frontend.ops.relu as _relu
import tripy_frontend.ops.sigmoid as _sigmoid
import tripy_frontend.ops.sin as _sin
import tripy_frontend.ops.sqrt as _sqrt
import tripy_frontend.ops.tanh as _tanh
import tripy_frontend.ops.cast as _cast
import tripy_frontend.ops.where as _where
from tripy_flatir import dtypes
from tripy_frontend.tensor import Tensor
from tripy_importers.onnx.ops.registry import Dims, onnx_dtype, onnx_op, tensor


def _fold(a: Dims, b: Dims, fold: Callable[[Any, Any], Any], dtype: Optional[dtypes.dtype]) -> Dims:
    """`fold` elementwise over two shape values, broadcasting a one-element side."""
    x, y = a.values, b.values
    n = max(len(x), len(y))
    values = tuple(fold(x[i if len(x) > 1 else 0], y[i if len(y) > 1 else 0]) for i in range(n))
    return Dims(values, a.scalar and b.scalar, dtype or a.dtype)


def _binary(
    fn: Callable[[Any, Any], Any],
    fold: Optional[Callable[[Any, Any], Any]] = None,
    static_only: bool = False,
    dtype: Optional[dtypes.dtype] = None,
) -> Callable[[Any, Any], Any]:
    """An ONNX binary operator: folded on shape values (`fold`; only static ones when `static_only`), else `fn`
    on tensors."""

    def call(a: Any, b: Any) -> Any:
        if (
            fold is not None
            and isinstance(a, Dims)
            and isinstance(b, Dims)
            and (not static_only or (a.static and b.static))
        ):
            return _fold(a, b, fold, dtype)
        return fn(tensor(a), tensor(b))

    return call


for _names, _fn, _fold_fn in [
    (("Add",), operator.add, operator.add),
    (("Sub",), operator.sub, operator.sub),
    (("Mul",), operator.mul, operator.mul),
]:
    onnx_op(*_names)(_binary(_fn, _fold_fn))


def _divide(a: Tensor, b: Tensor) -> Tensor:
    """ONNX's Div: integer division rounds toward zero."""
    if a.dtype.is_floating:
        return a / b
    quotient = a // b
    return _where.where((a % b != 0) & ((a < 0) != (b < 0)), quotient + 1, quotient)


onnx_op("Div")(_binary(_divide, lambda x, y: x // y))
onnx_op("Mod")(_binary(operator.mod, operator.mod))

for _name, _fn in [
    ("Equal", operator.eq),
    ("Less", operator.lt),
    ("LessOrEqual", operator.le),
    ("Greater", operator.gt),
    ("GreaterOrEqual", operator.ge),
]:
    onnx_op(_name)(_binary(_fn, _fn, static_only=True, dtype=dtypes.bool))

for _name, _fn in [("And", operator.and_), ("Or", operator.or_), ("Xor", operator.xor)]:
    onnx_op(_name)(_binary(_fn))


@onnx_op("Pow")
def pow_(a: Any, b: Any) -> Any:
    a, b = tensor(a), tensor(b)
    if b.dtype is not a.dtype:
        b = _cast.cast(b, a.dtype)
    return a**b


def _variadic(fn: Callable[[Any, Any], Any], fold: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    binary = _binary(fn, fold, static_only=True)

    def call(*values: Any) -> Any:
        out = values[0]
        for v in values[1:]:
            out = binary(out, v)
        return out

    return call


onnx_op("Max")(_variadic(_maximum.maximum, max))
onnx_op("Min")(_variadic(_minimum.minimum, min))
onnx_op("Sum")(_variadic(operator.add, operator.add))


@onnx_op("Not")
def not_(a: Any) -> Any:
    return ~tensor(a)


@onnx_op("Neg")
def neg(a: Any) -> Any:
    if isinstance(a, Dims):
        return a.with_values([-v for v in a.values], a.scalar)
    return -a


for _name, _unary in [
    ("Abs", _abs.abs),
    ("Exp", _exp.exp),
    ("Log", _log.log),
    ("Sqrt", _sqrt.sqrt),
    ("Sin", _sin.sin),
    ("Cos", _cos.cos),
    ("Tanh", _tanh.tanh),
    ("Sigmoid", _sigmoid.sigmoid),
    ("Relu", _relu.relu),
]:
    onnx_op(_name)(lambda a, _f=_unary: _f(tensor(a)))


@onnx_op("Reciprocal")
def reciprocal(a: Tensor) -> Tensor:
    return 1.0 / a


@onnx_op("IsNaN")
def isnan(a: Tensor) -> Tensor:
    return a != a


@onnx_op("IsInf")
def isinf(a: Tensor, detect_negative: int = 1, detect_positive: int = 1) -> Tensor:
    hits = (a == math.inf) if detect_positive else None
    if detect_negative:
        hits = (a == -math.inf) if hits is None else hits | (a == -math.inf)
    return hits if hits is not None else a != a


@onnx_op("Gelu")
def gelu(a: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        return 0.5 * a * (1.0 + _tanh.tanh(math.sqrt(2.0 / math.pi) * (a + 0.044715 * a * a * a)))
    return _gelu.gelu(a)


@onnx_op("LeakyRelu")
def leaky_relu(a: Tensor, alpha: float = 0.01) -> Tensor:
    return _where.where(a > 0, a, a * alpha)


@onnx_op("HardSigmoid")
def hard_sigmoid(a: Tensor, alpha: float = 0.2, beta: float = 0.5) -> Tensor:
    return _minimum.minimum(_maximum.maximum(a * alpha + beta, 0.0), 1.0)


@onnx_op("HardSwish")
def hard_swish(a: Tensor) -> Tensor:
    return a * hard_sigmoid(a, 1.0 / 6.0, 0.5)


@onnx_op("Softplus")
def softplus(a: Tensor) -> Tensor:
    return _log.log(1.0 + _exp.exp(a))


@onnx_op("Clip")
def clip(a: Tensor, low: Any = None, high: Any = None) -> Tensor:
    if low is not None:
        a = _maximum.maximum(a, tensor(low))
    if high is not None:
        a = _minimum.minimum(a, tensor(high))
    return a


@onnx_op("Where")
def where(condition: Any, a: Any, b: Any) -> Any:
    if all(isinstance(v, Dims) and v.static for v in (condition, a, b)):
        pairs = _fold(a, b, lambda x, y: (x, y), None)
        return _fold(condition, pairs, lambda c, xy: xy[0] if c else xy[1], a.dtype)
    return _where.where(tensor(condition), tensor(a), tensor(b))


@onnx_op("Cast")
def cast(a: Any, to: int, saturate: int = 1, round_mode: str = "up") -> Any:
    """A shape value cast to an integer type stays one; the step's recorded dtype casts everything else."""
    target = onnx_dtype(to)
    if isinstance(a, Dims) and target in (dtypes.int32, dtypes.int64):
        return Dims(a.values, a.scalar, target)
    return tensor(a)


@onnx_op("CastLike")
def cast_like(a: Any, like: Any, saturate: int = 1) -> Any:
    return tensor(a)


@onnx_op("Identity", "Dropout")
def identity(a: Any, *rest: Any, **attrs: Any) -> Any:
    """Copies, and Dropout at inference (its mask output, when used, is not supported)."""
    return a
