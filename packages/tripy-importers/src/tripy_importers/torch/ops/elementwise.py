"""Elementwise ATen operators: arithmetic, comparisons, logic, activations, casts."""

from __future__ import annotations

import math
from typing import Any, Optional

import tripy_frontend.ops.abs as _abs
import tripy_frontend.ops.cos as _cos
import tripy_frontend.ops.exp as _exp
import tripy_frontend.ops.full as _full
import tripy_frontend.ops.gelu as _gelu
import tripy_frontend.ops.log as _log
import tripy_frontend.ops.maximum as _maximum
import tripy_frontend.ops.minimum as _minimum
import tripy_frontend.ops.relu as _relu
import tripy_frontend.ops.rsqrt as _rsqrt
import tripy_frontend.ops.sigmoid as _sigmoid
import tripy_frontend.ops.sin as _sin
import tripy_frontend.ops.sqrt as _sqrt
import tripy_frontend.ops.tanh as _tanh
import tripy_frontend.ops.where as _where
from tripy_flatir import dtypes
from tripy_frontend.tensor import Tensor
from tripy_importers.torch.ops.registry import aten

BINARY = (0, 1)


@aten("add.Tensor", "add.Scalar", promote=BINARY)
def add(a: Any, b: Any, alpha: Any = 1) -> Any:
    return a + (b if alpha == 1 else b * alpha)


@aten("sub.Tensor", "sub.Scalar", promote=BINARY)
def sub(a: Any, b: Any, alpha: Any = 1) -> Any:
    return a - (b if alpha == 1 else b * alpha)


@aten("rsub.Scalar", "rsub.Tensor", promote=BINARY)
def rsub(a: Any, b: Any, alpha: Any = 1) -> Any:
    return b - (a if alpha == 1 else a * alpha)


@aten("mul.Tensor", "mul.Scalar", promote=BINARY)
def mul(a: Any, b: Any) -> Any:
    return a * b


@aten("div.Tensor", "div.Scalar", promote=BINARY)
def div(a: Any, b: Any) -> Any:
    return a / b


@aten("div.Tensor_mode", "div.Scalar_mode", promote=BINARY)
def div_mode(a: Any, b: Any, rounding_mode: Optional[str] = None) -> Any:
    if rounding_mode is None:
        return a / b
    if rounding_mode == "floor":
        return a // b
    quotient = a // b  # "trunc": round toward zero, so a negative non-integral quotient rounds up
    return _where.where((a % b != 0) & ((a < 0) != (b < 0)), quotient + 1, quotient)


@aten("floor_divide.default", promote=BINARY)
def floor_divide(a: Any, b: Any) -> Any:
    return a // b


@aten("remainder.Tensor", "remainder.Scalar", "fmod.Tensor", "fmod.Scalar", promote=BINARY)
def remainder(a: Any, b: Any) -> Any:
    return a % b


@aten("pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", promote=BINARY)
def pow_(a: Any, b: Any) -> Any:
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        if b == 2:
            return a * a
        if b == 0.5:
            return _sqrt.sqrt(a)
        if b == 1:
            return a
    return a**b


@aten("maximum.default", promote=BINARY)
def maximum(a: Any, b: Any) -> Any:
    return _maximum.maximum(a, b)


@aten("minimum.default", promote=BINARY)
def minimum(a: Any, b: Any) -> Any:
    return _minimum.minimum(a, b)


@aten("eq.Tensor", "eq.Scalar", promote=BINARY)
def eq(a: Any, b: Any) -> Any:
    return a == b


@aten("ne.Tensor", "ne.Scalar", promote=BINARY)
def ne(a: Any, b: Any) -> Any:
    return a != b


@aten("lt.Tensor", "lt.Scalar", promote=BINARY)
def lt(a: Any, b: Any) -> Any:
    return a < b


@aten("le.Tensor", "le.Scalar", promote=BINARY)
def le(a: Any, b: Any) -> Any:
    return a <= b


@aten("gt.Tensor", "gt.Scalar", promote=BINARY)
def gt(a: Any, b: Any) -> Any:
    return a > b


@aten("ge.Tensor", "ge.Scalar", promote=BINARY)
def ge(a: Any, b: Any) -> Any:
    return a >= b


@aten("logical_not.default")
def logical_not(a: Tensor) -> Tensor:
    return ~a if a.dtype is dtypes.bool else a == 0


@aten("bitwise_not.default")
def bitwise_not(a: Tensor) -> Tensor:
    return ~a


@aten("logical_and.default", "bitwise_and.Tensor", "bitwise_and.Scalar", "__and__.Tensor", promote=BINARY)
def logical_and(a: Any, b: Any) -> Any:
    return a & b


@aten("logical_or.default", "bitwise_or.Tensor", "bitwise_or.Scalar", "__or__.Tensor", promote=BINARY)
def logical_or(a: Any, b: Any) -> Any:
    return a | b


@aten("logical_xor.default", "bitwise_xor.Tensor", promote=BINARY)
def logical_xor(a: Any, b: Any) -> Any:
    return a ^ b


@aten("where.self", "where.ScalarSelf", "where.ScalarOther", "where.Scalar", promote=(1, 2))
def where(condition: Tensor, a: Any, b: Any) -> Tensor:
    return _where.where(condition, a, b)


@aten("neg.default")
def neg(a: Tensor) -> Tensor:
    return -a


@aten("reciprocal.default")
def reciprocal(a: Tensor) -> Tensor:
    return 1.0 / a


# ATen operators that are one tripy function of one tensor.
UNARY = {
    "abs.default": _abs.abs,
    "exp.default": _exp.exp,
    "log.default": _log.log,
    "sqrt.default": _sqrt.sqrt,
    "rsqrt.default": _rsqrt.rsqrt,
    "sin.default": _sin.sin,
    "cos.default": _cos.cos,
    "tanh.default": _tanh.tanh,
    "sigmoid.default": _sigmoid.sigmoid,
    "relu.default": _relu.relu,
}
for _name, _fn in UNARY.items():
    aten(_name)(_fn)


@aten("gelu.default")
def gelu(a: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        return 0.5 * a * (1.0 + _tanh.tanh(math.sqrt(2.0 / math.pi) * (a + 0.044715 * a * a * a)))
    return _gelu.gelu(a)


@aten("hardtanh.default", "clamp.default")
def clamp(a: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    if min is not None:
        a = _where.where(a < min, _full.full_like(a, min), a)
    if max is not None:
        a = _where.where(a > max, _full.full_like(a, max), a)
    return a


@aten("leaky_relu.default")
def leaky_relu(a: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _where.where(a > 0, a, a * negative_slope)


@aten(
    "_to_copy.default",
    "clone.default",
    "alias.default",
    "detach.default",
    "lift_fresh_copy.default",
    "contiguous.default",
    "_to_dim_order_copy.default",
)
def identity(a: Any, *args: Any, **kwargs: Any) -> Any:
    """Copies and dtype conversions: a step's result is cast to the dtype PyTorch recorded, so nothing else to do."""
    return a


@aten("dropout.default")
def dropout(a: Tensor, p: float = 0.5, train: Optional[bool] = False) -> Any:
    """Dropout is the identity at inference (a program exported in training mode keeps it as an operator)."""
    return a
