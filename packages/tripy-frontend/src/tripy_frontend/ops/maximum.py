from typing import Any

from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.binary import binary
from tripy_frontend.ops.common import NUMERIC_TYPES
from tripy_frontend.tensor import Tensor
from tripy_trace.ops.binary_elementwise import Kind


@public_api(
    document_under="ops_elementwise",
    dtype_constraints={"lhs": "T1", "rhs": "T1", RETURN: "T1"},
    dtype_variables={"T1": NUMERIC_TYPES},
)
def maximum(lhs: Any, rhs: Any) -> Tensor:
    """Elementwise maximum of two tensors (or a tensor and a Python number), with NumPy broadcasting.

    .. code-block:: python

        out = tp.maximum(tp.Tensor([1.0, 3.0]), tp.Tensor([2.0, 1.0]))
        assert out.tolist() == [2.0, 3.0]
    """
    return binary(lhs, rhs, Kind.MAXIMUM)
