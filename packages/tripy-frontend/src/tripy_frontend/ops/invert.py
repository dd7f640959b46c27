from tripy_frontend.export import RETURN, dtype_rules
from tripy_frontend.ops.common import BITWISE_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.ops.unary import unary
from tripy_frontend.tensor import Tensor
from tripy_flatir.ops.not_ import NotOp


@TENSOR_METHOD_REGISTRY("__invert__")
@dtype_rules({"self": "T1", RETURN: "T1"}, {"T1": BITWISE_TYPES}, name="'~'")
def __invert__(self: Tensor) -> Tensor:
    """``~a``: logical NOT of a bool tensor, bitwise NOT of an integer tensor (as in NumPy).

    .. code-block:: python

        assert (~tp.Tensor([True, False])).tolist() == [False, True]
        assert (~tp.Tensor([0, 5, -1])).tolist() == [-1, -6, 0]
    """
    return unary(self, NotOp, "not")
