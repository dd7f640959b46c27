"""Shared body of the elementwise one-input ops (each public op has its own file)."""

from __future__ import annotations

from typing import Sequence

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.unary_elementwise import Kind, UnaryElementwise
from tripy_frontend.tensor import Tensor


def check_dtype(input: Tensor, allowed: Sequence[dtypes.dtype], what: str) -> None:
    if not isinstance(input, Tensor):
        raise_error(f"{what} expects a tripy.Tensor, but got {type(input).__name__}.", _stack.capture())
    if input.dtype not in allowed:
        raise_error(f"{what} does not support dtype {input.dtype}.", _stack.capture(),
                    ["Supported dtypes: " + ", ".join(d.name for d in allowed) + ". Use tripy.cast() to convert.",
                     ], [input.stack_info])


FLOAT_TYPES = (dtypes.float32, dtypes.float16, dtypes.bfloat16)
NUMERIC_TYPES = FLOAT_TYPES + (dtypes.int8, dtypes.int32, dtypes.int64)


def unary(input: Tensor, kind: Kind, what: str, allowed: Sequence[dtypes.dtype] = FLOAT_TYPES) -> Tensor:
    check_dtype(input, allowed, what)
    return Tensor._from_op(UnaryElementwise, [input], kind=kind)
