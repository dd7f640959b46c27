from typing import Any

from tripy_frontend.export import RETURN, dtype_rules
from tripy_frontend.ops.binary import binary
from tripy_frontend.ops.common import NUMERIC_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor
from tripy_trace.ops.binary_elementwise import Kind


_DTYPES = dtype_rules({"self": "T1", "other": "T1", RETURN: "T1"}, {"T1": NUMERIC_TYPES}, name="'//'")


@TENSOR_METHOD_REGISTRY("__floordiv__")
@_DTYPES
def __floordiv__(self: Tensor, other: Any) -> Tensor:
    """Floor division (rounds toward negative infinity, as in Python), ``a // b``, elementwise, with NumPy broadcasting; a Python number takes the tensor's dtype.

    Floats follow Python and NumPy exactly, infinities included (``inf // 2.0`` is nan, ``1.0 // -inf`` is -1.0,
    ``x // 0.0`` is ``x / 0.0``). Integer ``x // 0`` is 0 (NumPy's result; Python raises).

    .. code-block:: python

        a = tp.Tensor([[1.0, 2.0], [3.0, 4.0]])
        b = tp.Tensor([2.0, 4.0])
        assert np.array_equal(np.from_dlpack(a // b), np.array([[0.0, 0.0], [1.0, 1.0]], dtype=np.float32))
    """
    return binary(self, other, Kind.FLOOR_DIV)


@TENSOR_METHOD_REGISTRY("__rfloordiv__")
@_DTYPES
def __rfloordiv__(self: Tensor, other: Any) -> Tensor:
    """other // self for a Python number other."""
    return binary(other, self, Kind.FLOOR_DIV)
