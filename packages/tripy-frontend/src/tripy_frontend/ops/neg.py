from tripy_frontend.export import RETURN, dtype_rules
from tripy_frontend.ops.common import NUMERIC_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.ops.unary import unary
from tripy_frontend.tensor import Tensor
from tripy_flatir.ops.negate import NegateOp


@TENSOR_METHOD_REGISTRY("__neg__")
@dtype_rules({"self": "T1", RETURN: "T1"}, {"T1": NUMERIC_TYPES}, name="'-' (negation)")
def __neg__(self: Tensor) -> Tensor:
    """Negation, elementwise: ``-t``.

    .. code-block:: python

        assert (-tp.Tensor([1.0, -2.0])).tolist() == [-1.0, 2.0]
    """
    return unary(self, NegateOp, "neg")
