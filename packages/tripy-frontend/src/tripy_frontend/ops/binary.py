"""Shared body of the two-input elementwise ops and operators (each has its own file and declares its dtypes)."""

from __future__ import annotations

from typing import Any

from tripy_flatir import stack_info as _stack
from tripy_trace.ops.binary_elementwise import BinaryElementwise, Kind
from tripy_frontend.ops.common import to_tensors
from tripy_frontend.tensor import Tensor


def binary(lhs: Any, rhs: Any, kind: Kind) -> Tensor:
    if type(lhs) is not Tensor or type(rhs) is not Tensor:  # a number (or other data) next to a tensor
        if not isinstance(lhs, Tensor) and not isinstance(rhs, Tensor) and kind.name in ("MAXIMUM", "MINIMUM"):
            lhs = Tensor(lhs)
        lhs, rhs = to_tensors(lhs, rhs, _SPELLING[id(kind)])
    # (Tensor._from_op written out: every operator the user applies comes here.)
    t = _new(Tensor)
    t.trace_tensor = _make([lhs.trace_tensor, rhs.trace_tensor], _capture(), 1, {"kind": kind})
    return t


_new = object.__new__
_make = BinaryElementwise.make
_capture = _stack.capture
_SPELLING = {id(k): k.value[1] for k in Kind}  # (by id: Enum hashes in Python)
