from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import FLOAT_TYPES
from tripy_frontend.ops.unary import unary
from tripy_frontend.tensor import Tensor
from tripy_flatir.ops.exp import ExpOp


@public_api(
    document_under="ops_elementwise",
    dtype_constraints={"input": "T1", RETURN: "T1"},
    dtype_variables={"T1": FLOAT_TYPES},
)
def exp(input: Tensor) -> Tensor:
    """Exponential, e**x, elementwise.

    Args:
        input: A floating-point tensor.

    Returns:
        A tensor of the same shape and dtype.

    .. code-block:: python

        x = tp.Tensor([0.5, 1.0, 2.0])
        y = tp.exp(x)
        assert np.allclose(np.from_dlpack(y), np.exp(np.array([0.5, 1.0, 2.0], dtype=np.float32)), atol=1e-6)
    """
    return unary(input, ExpOp, "exp")
