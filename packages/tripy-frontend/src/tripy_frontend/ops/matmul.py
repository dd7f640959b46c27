from typing import Any

from tripy_trace.ops.matmul import MatrixMultiply
from tripy_frontend.ops.binary import ALL_NUMERIC
from tripy_frontend.ops.common import to_tensors
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.ops.unary import check_dtype
from tripy_frontend.tensor import Tensor


@TENSOR_METHOD_REGISTRY("__matmul__")
def __matmul__(self: Tensor, other: Any) -> Tensor:
    """Matrix product ``a @ b`` with NumPy's rules: 1-D operands act as row/column vectors, leading
    (batch) dims broadcast.

    .. code-block:: python

        a = tp.iota((2, 3, 4))
        b = tp.iota((4, 5))
        expected = np.from_dlpack(a) @ np.from_dlpack(b)
        assert np.allclose(np.from_dlpack(a @ b), expected)
    """
    a, b = to_tensors(self, other, "'@'")
    check_dtype(a, ALL_NUMERIC, "'@'")
    check_dtype(b, ALL_NUMERIC, "'@'")
    return Tensor._from_op(MatrixMultiply, [a, b])


@TENSOR_METHOD_REGISTRY("__rmatmul__")
def __rmatmul__(self: Tensor, other: Any) -> Tensor:
    """``other @ self``."""
    return __matmul__(Tensor(other), self)
