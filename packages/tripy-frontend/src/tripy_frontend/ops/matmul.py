from typing import Any

from tripy_flatir import stack_info as _stack
from tripy_trace.ops.matmul import MatrixMultiply
from tripy_frontend.export import RETURN, dtype_rules
from tripy_frontend.ops.common import NUMERIC_TYPES, to_tensors
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor


_DTYPES = dtype_rules({"self": "T1", "other": "T1", RETURN: "T1"}, {"T1": NUMERIC_TYPES}, name="'@'")


@TENSOR_METHOD_REGISTRY("__matmul__")
@_DTYPES
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
    # (Tensor._from_op written out; the stack capture skips this function and its wrapper, the only way in.)
    t = _new(Tensor)
    t.trace_tensor = MatrixMultiply.make_one([a.trace_tensor, b.trace_tensor], _stack.capture(1, 2))
    return t


@TENSOR_METHOD_REGISTRY("__rmatmul__")
@_DTYPES
def __rmatmul__(self: Tensor, other: Any) -> Tensor:
    """``other @ self``."""
    return __matmul__(Tensor(other), self)


_new = object.__new__
