from typing import Any

from tripy_flatir import dtypes
from tripy_trace.ops.binary_elementwise import Kind
from tripy_frontend.export import RETURN, dtype_rules
from tripy_frontend.ops.cast import cast
from tripy_frontend.ops.binary import binary
from tripy_frontend.ops.common import FLOAT_TYPES, NUMERIC_TYPES, to_tensors
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor


def _true_divide(lhs: Any, rhs: Any) -> Tensor:
    if type(lhs) is Tensor and lhs.trace_tensor.dtype.is_floating:  # nothing to cast: binary does the rest
        return binary(lhs, rhs, Kind.DIV)
    a, b = to_tensors(lhs, rhs, "'/'")
    if a.dtype.is_integer and b.dtype.is_integer:  # as in NumPy and PyTorch, '/' of integers gives floats
        a, b = cast(a, dtypes.float32), cast(b, dtypes.float32)
    return binary(a, b, Kind.DIV)


# Integer operands give float32, so the result's dtype is a variable of its own.
_DTYPES = dtype_rules({"self": "T1", "other": "T1", RETURN: "T2"}, {"T1": NUMERIC_TYPES, "T2": FLOAT_TYPES}, name="'/'")


@TENSOR_METHOD_REGISTRY("__truediv__")
@_DTYPES
def __truediv__(self: Tensor, other: Any) -> Tensor:
    """True division, ``a / b``, elementwise with NumPy broadcasting. Integer operands give float32 (as
    NumPy and PyTorch do); use ``//`` for integer floor division.

    .. code-block:: python

        a = tp.Tensor([3, 4])
        assert (a / 2).tolist() == [1.5, 2.0]
    """
    return _true_divide(self, other)


@TENSOR_METHOD_REGISTRY("__rtruediv__")
@_DTYPES
def __rtruediv__(self: Tensor, other: Any) -> Tensor:
    """``other / self`` for a Python number ``other``."""
    return _true_divide(other, self)
