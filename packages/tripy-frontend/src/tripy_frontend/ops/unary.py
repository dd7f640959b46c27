"""Shared body of the elementwise one-input ops (each public op has its own file and declares its dtypes)."""

from __future__ import annotations

from tripy_trace.ops.unary_elementwise import Kind, UnaryElementwise
from tripy_frontend.tensor import Tensor


def unary(input: Tensor, kind: Kind) -> Tensor:
    return Tensor._from_op(UnaryElementwise, [input], kind=kind)
