from typing import Any

from tripy_flatir import dtypes
from tripy_frontend.ops.binary import binary
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor
from tripy_trace.ops.binary_elementwise import Kind

_ALLOWED = (dtypes.bool, dtypes.int8, dtypes.int32, dtypes.int64)


@TENSOR_METHOD_REGISTRY("__xor__")
def __xor__(self: Tensor, other: Any) -> Tensor:
    """``a ^ b`` elementwise with NumPy broadcasting: logical on bool tensors, bitwise on integer tensors.

    .. code-block:: python

        a = tp.Tensor([True, True, False])
        b = tp.Tensor([True, False, False])
        assert (a ^ b).tolist() == [False, True, False]
        assert (tp.Tensor([3, 6, 4]) ^ 3).tolist() == [0, 5, 7]
    """
    return binary(self, other, Kind.XOR, _ALLOWED)


@TENSOR_METHOD_REGISTRY("__rxor__")
def __rxor__(self: Tensor, other: Any) -> Tensor:
    """``other ^ self``."""
    return binary(other, self, Kind.XOR, _ALLOWED)
