from typing import Any

from tripy_frontend.export import RETURN, dtype_rules
from tripy_frontend.ops.binary import binary
from tripy_frontend.ops.common import BITWISE_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor
from tripy_trace.ops.binary_elementwise import Kind

_DTYPES = dtype_rules({"self": "T1", "other": "T1", RETURN: "T1"}, {"T1": BITWISE_TYPES}, name="'|'")


@TENSOR_METHOD_REGISTRY("__or__")
@_DTYPES
def __or__(self: Tensor, other: Any) -> Tensor:
    """``a | b`` elementwise with NumPy broadcasting: logical on bool tensors, bitwise on integer tensors.

    .. code-block:: python

        a = tp.Tensor([True, True, False])
        b = tp.Tensor([True, False, False])
        assert (a | b).tolist() == [True, True, False]
        assert (tp.Tensor([3, 6, 4]) | 3).tolist() == [3, 7, 7]
    """
    return binary(self, other, Kind.OR)


@TENSOR_METHOD_REGISTRY("__ror__")
@_DTYPES
def __ror__(self: Tensor, other: Any) -> Tensor:
    """``other | self``."""
    return binary(other, self, Kind.OR)
