from typing import Any

from tripy_flatir import dtypes
from tripy_frontend.export import RETURN, dtype_rules
from tripy_frontend.ops.binary import binary
from tripy_frontend.ops.common import COMPARABLE_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor
from tripy_trace.ops.binary_elementwise import Kind


@TENSOR_METHOD_REGISTRY("__ge__")
@dtype_rules({"self": "T1", "other": "T1", RETURN: "T2"}, {"T1": COMPARABLE_TYPES, "T2": (dtypes.bool,)}, name="'>='")
def __ge__(self: Tensor, other: Any) -> Tensor:
    """``a >= b`` elementwise with NumPy broadcasting, giving a bool tensor.

    .. code-block:: python

        out = tp.Tensor([1, 2]) >= tp.Tensor([2, 2])
        assert out.tolist() == [False, True]
    """
    return binary(self, other, Kind.GE)
