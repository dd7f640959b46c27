"""Argument handling shared by frontend ops: scalars next to tensors, shape arguments, dims."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from tripy_backend import memory
from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.device import CPU as _CPU
from tripy_flatir.exceptions import raise_error
from tripy_flatir.tensor import DYNAMIC
from tripy_trace.ops.concatenate import Concatenate
from tripy_trace.ops.constant import Constant
from tripy_trace.ops.reshape import Reshape
from tripy_frontend.tensor import DimensionSize, Tensor, size_expression, size_tensor, static_value

NUMBER_TYPES = (bool, int, float, np.number, np.bool_)
_new_tensor = object.__new__

# Groups of dtypes used in the ops' dtype declarations (@public_api(dtype_constraints=...)). Arithmetic
# excludes float8 and int4, which are storage types for quantization (as in nvtripy): int4 arithmetic
# gives wrong results on XLA:CPU; cast or dequantize them first.
FLOAT_TYPES = (dtypes.float32, dtypes.float16, dtypes.bfloat16)
INT_TYPES = (dtypes.int8, dtypes.int32, dtypes.int64)
NUMERIC_TYPES = FLOAT_TYPES + INT_TYPES
BITWISE_TYPES = (dtypes.bool,) + INT_TYPES  # logical on bool, bitwise on integers
COMPARABLE_TYPES = NUMERIC_TYPES + (dtypes.bool,)
INDEX_TYPES = (dtypes.int32, dtypes.int64)
ALL_TYPES = dtypes.ALL_DTYPES
# int4 tensors can be created, moved, indexed and cast, but an int4 constant cannot be lowered (so no
# full, pad, tril, masked_fill... of int4), and stablehlo.iota has no bool form.
CONSTANT_TYPES = tuple(d for d in ALL_TYPES if d is not dtypes.int4)
IOTA_TYPES = tuple(d for d in ALL_TYPES if d is not dtypes.bool)


def constant(value: Any, dtype: dtypes.dtype, device: Any = None) -> Tensor:
    """A small literal tensor (a scalar or a short list) embedded in the program."""
    return Tensor._from_op(
        Constant, (), value=np.asarray(value, dtype=dtype.numpy_dtype), dtype=dtype, device=device or _CPU
    )


def scalar_like(value: Any, like: Tensor, what: str) -> Tensor:
    """A Python number used next to tensor `like` becomes a rank-0 constant of like's dtype (an argument of
    eager programs, a literal in compiled ones: see ``tripy_trace.ops.constant.Scalar``)."""
    dt = like.dtype
    if isinstance(value, (float, np.floating)) and not dt.is_floating and not float(value).is_integer():
        raise_error(
            f"Cannot combine a {dt} tensor with the Python float {value} in {what} without losing precision.",
            _stack.capture(),
            [f"Cast the tensor first: tripy.cast(t, tp.float32) {what} {value}."],
        )
    if dt is dtypes.bool and not isinstance(value, (bool, np.bool_)):
        raise_error(
            f"Cannot combine a bool tensor with the Python number {value} in {what}.",
            _stack.capture(),
            ["Cast the tensor to a numeric dtype first with tripy.cast()."],
        )
    if not dt.is_floating and dt is not dtypes.bool and not isinstance(value, bool):
        info = np.iinfo(dt.numpy_dtype)
        if not info.min <= value <= info.max:
            raise_error(
                f"The Python number {value} does not fit the {dt} tensor it is combined with in {what} "
                f"(range {info.min} to {info.max}).",
                _stack.capture(),
                [f"Cast the tensor to a wider dtype first, e.g. tripy.cast(t, tp.int64) {what} {value}."],
            )
    t = _new_tensor(Tensor)
    t.trace_tensor = Constant.scalar(value, dt, like.trace_tensor.device, memory.to_device)
    return t


def to_tensors(a: Any, b: Any, what: str) -> Tuple[Tensor, Tensor]:
    """Coerce a binary op's operands: Python numbers take the other operand's dtype."""
    a_t, b_t = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_t and b_t:
        return a, b
    if a_t and isinstance(b, NUMBER_TYPES):
        return a, scalar_like(b, a, what)
    if b_t and isinstance(a, NUMBER_TYPES):
        return scalar_like(a, b, what), b
    other = b if a_t else a
    if a_t or b_t:
        try:
            t = Tensor(other)
        except Exception:
            raise_error(
                f"Unsupported operand type for {what}: '{type(other).__name__}'.",
                _stack.capture(),
                ["Use a tripy.Tensor or a Python number."],
            )
        return (a, t) if a_t else (t, b)
    raise_error(f"{what} needs at least one tripy.Tensor operand.", _stack.capture())


def normalize_dim(dim: int, rank: int, what: str) -> int:
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise_error(f"{what}: dim must be an int, but got {type(dim).__name__}.", _stack.capture())
    lo, hi = -max(rank, 1), max(rank, 1) - 1
    if not lo <= dim <= hi:
        raise_error(
            f"{what}: dim {dim} is out of range for a tensor of rank {rank}.",
            _stack.capture(),
            [f"Use a dim in [{lo}, {hi}]."],
        )
    return int(dim) % max(rank, 1)


def normalize_dims(dim: Any, rank: int, what: str) -> Tuple[int, ...]:
    """None -> all dims; an int or a sequence of ints -> sorted, unique, non-negative dims."""
    if dim is None:
        return tuple(range(rank))
    dims = [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    normalized = [normalize_dim(d, rank, what) for d in dims]  # type: ignore[arg-type]
    if len(set(normalized)) != len(normalized):
        raise_error(f"{what}: dims {list(dims)} name a dimension more than once.", _stack.capture())
    return tuple(sorted(normalized))


def shape_arg(shape: Any, what: str) -> Tuple[Tuple[int, ...], Optional[Tensor]]:
    """A user shape (ints and DimensionSizes) -> (static dims with -1 where dynamic, shape tensor or None)."""

    if isinstance(shape, (int, np.integer, DimensionSize)):
        shape = (shape,)
    if isinstance(shape, Tensor) or not isinstance(shape, Sequence):
        raise_error(
            f"{what}: shape must be a sequence of ints or DimensionSizes, but got {type(shape).__name__}.",
            _stack.capture(),
        )
    static = []
    for d in shape:
        if isinstance(d, DimensionSize):
            v = static_value(d)
            static.append(DYNAMIC if v is None else v)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            if d < 0:
                raise_error(f"{what}: shape {list(shape)} has a negative dimension.", _stack.capture())
            static.append(int(d))
        else:
            raise_error(
                f"{what}: shape entries must be ints or DimensionSizes, but got {type(d).__name__}.", _stack.capture()
            )
    if DYNAMIC not in static:
        return tuple(static), None

    def build() -> Any:
        parts = [
            Tensor._from_op(Reshape, [d if isinstance(d, Tensor) else constant(d, dtypes.int32)], shape=(1,))
            for d in shape
        ]
        return Tensor._from_op(Concatenate, parts, dim=0).trace_tensor

    key = tuple(size_expression(d) if isinstance(d, DimensionSize) else int(d) for d in shape)
    # (the shape (B, T, n_head, T // n_head) of every layer: one tensor in the trace)
    return tuple(static), Tensor._from_trace_tensor(size_tensor(key, build) if None not in key else build())
