"""Shared body of the two-input elementwise ops and operators (each has its own file and declares its dtypes).

Only those ops call ``binary``, which users reach only through the op's checking wrapper: the stack capture
skips those three frames (see ``stack_info.capture``)."""

from __future__ import annotations

from typing import Any

from tripy_backend import memory
from tripy_flatir import stack_info as _stack
from tripy_trace.ops.binary_elementwise import BinaryElementwise, Kind
from tripy_trace.ops.constant import Constant
from tripy_frontend.ops.common import to_tensors
from tripy_frontend.tensor import Tensor


def binary(lhs: Any, rhs: Any, kind: Kind) -> Tensor:
    if type(lhs) is Tensor and type(rhs) is Tensor:
        a, b = lhs.trace_tensor, rhs.trace_tensor
    elif type(lhs) is Tensor and type(rhs) in _PLAIN_NUMBERS and lhs.trace_tensor.dtype.is_floating:
        # ``x * 0.5`` on a floating tensor: what to_tensors gives (scalar_like refuses no Python float or int
        # next to a floating tensor), without building a Tensor for the number.
        a = lhs.trace_tensor
        b = _scalar(rhs, a.dtype, a.device, _upload)
    else:  # a number (or other data) next to a tensor
        if not isinstance(lhs, Tensor) and not isinstance(rhs, Tensor) and kind.name in ("MAXIMUM", "MINIMUM"):
            lhs = Tensor(lhs)
        lhs, rhs = to_tensors(lhs, rhs, _SPELLING[id(kind)])
        a, b = lhs.trace_tensor, rhs.trace_tensor
    # (Tensor._from_op written out: every operator the user applies comes here.)
    t = _new(Tensor)
    t.trace_tensor = _make([a, b], _capture(1, 3), kind)  # (skip: this function, the op and its wrapper)
    return t


_new = object.__new__
_make = BinaryElementwise.make_one
_scalar = Constant.scalar
_upload = memory.to_device  # (a number's buffer: eager programs take numbers as arguments)
_PLAIN_NUMBERS = (float, int)  # (exact types: not bool, not NumPy scalars, which keep the general path)
_capture = _stack.capture
_SPELLING = {id(k): k.spelling for k in Kind}  # (by id: Enum hashes in Python)
