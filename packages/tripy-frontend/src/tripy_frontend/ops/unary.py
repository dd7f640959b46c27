"""Shared body of the elementwise one-input ops (each public op has its own file and declares its dtypes)."""

from __future__ import annotations

from tripy_flatir import stack_info as _stack
from tripy_trace.ops.unary_elementwise import Kind, UnaryElementwise
from tripy_frontend.tensor import Tensor


def unary(input: Tensor, kind: Kind) -> Tensor:
    # (Tensor._from_op written out: every elementwise function the user calls comes here.)
    t = _new(Tensor)
    t.trace_tensor = _make([input.trace_tensor], _capture(), 1, {"kind": kind})
    return t


_new = object.__new__
_make = UnaryElementwise.make
_capture = _stack.capture
