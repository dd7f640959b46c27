"""Shared body of the elementwise one-input ops (each public op has its own file and declares its dtypes)."""

from __future__ import annotations

from typing import Type

from tripy_flatir import stack_info as _stack
from tripy_flatir.ops.base import UnaryElementwiseOp
from tripy_trace.ops.unary_elementwise import UnaryElementwise
from tripy_frontend.tensor import Tensor


def unary(input: Tensor, flat_op: Type[UnaryElementwiseOp], spelling: str) -> Tensor:
    """`flat_op` applied to each element of `input`; `spelling` is the public name (``"tanh"`` for
    ``tripy.tanh``) that the trace, its dumps and its messages show."""
    # (Tensor._from_op written out: every elementwise function the user calls comes here.)
    t = _new(Tensor)
    t.trace_tensor = _make([input.trace_tensor], _capture(), 1, {"flat_op": flat_op, "spelling": spelling})
    return t


_new = object.__new__
_make = UnaryElementwise.make
_capture = _stack.capture
