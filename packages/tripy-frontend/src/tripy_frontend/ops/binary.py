"""Shared body of the two-input elementwise ops and operators (each has its own file)."""

from __future__ import annotations

from typing import Any, Sequence

from tripy_flatir import dtypes
from tripy_trace.ops.binary_elementwise import BinaryElementwise, Kind
from tripy_frontend.ops.common import to_tensors
from tripy_frontend.ops.unary import check_dtype
from tripy_frontend.tensor import Tensor

ALL_NUMERIC = (dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int8, dtypes.int32, dtypes.int64)


def binary(lhs: Any, rhs: Any, kind: Kind, allowed: Sequence[dtypes.dtype] = ALL_NUMERIC) -> Tensor:
    what = kind.value[1]
    if not isinstance(lhs, Tensor) and not isinstance(rhs, Tensor) and kind.name in ("MAXIMUM", "MINIMUM"):
        lhs = Tensor(lhs)
    a, b = to_tensors(lhs, rhs, what)
    check_dtype(a, allowed, what)
    check_dtype(b, allowed, what)
    return Tensor._from_op(BinaryElementwise, [a, b], kind=kind)
