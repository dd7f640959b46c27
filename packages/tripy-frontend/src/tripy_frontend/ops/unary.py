"""Shared body of the elementwise one-input ops (each public op has its own file and declares its dtypes).

Only those ops call ``unary``, which users reach only through the op's checking wrapper: the stack capture
skips those three frames (see ``stack_info.capture``)."""

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
    t.trace_tensor = _make([input.trace_tensor], _capture(1, 3), flat_op, spelling)  # (skip: see the docstring)
    return t


_new = object.__new__
_make = UnaryElementwise.make_one
_capture = _stack.capture
