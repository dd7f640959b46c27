"""Shared body of the two-input elementwise ops and operators (each has its own file and declares its dtypes)."""

from __future__ import annotations

from typing import Any

from tripy_trace.ops.binary_elementwise import BinaryElementwise, Kind
from tripy_frontend.ops.common import to_tensors
from tripy_frontend.tensor import Tensor


def binary(lhs: Any, rhs: Any, kind: Kind) -> Tensor:
    if not isinstance(lhs, Tensor) and not isinstance(rhs, Tensor) and kind.name in ("MAXIMUM", "MINIMUM"):
        lhs = Tensor(lhs)
    a, b = to_tensors(lhs, rhs, kind.value[1])
    return Tensor._from_op(BinaryElementwise, [a, b], kind=kind)
