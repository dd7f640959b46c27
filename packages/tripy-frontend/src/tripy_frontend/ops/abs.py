from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import NUMERIC_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.ops.unary import unary
from tripy_frontend.tensor import Tensor
from tripy_flatir.ops.abs import AbsOp


@public_api(document_under="ops_elementwise")
@TENSOR_METHOD_REGISTRY("__abs__")
@dtype_rules({"input": "T1", RETURN: "T1"}, {"T1": NUMERIC_TYPES})
def abs(input: Tensor) -> Tensor:
    """Absolute value, elementwise (also ``abs(t)``).

    .. code-block:: python

        y = tp.abs(tp.Tensor([-1.5, 2.0]))
        assert y.tolist() == [1.5, 2.0]
    """
    return unary(input, AbsOp, "abs")
