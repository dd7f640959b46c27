from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import FLOAT_TYPES
from tripy_frontend.ops.unary import unary
from tripy_frontend.tensor import Tensor
from tripy_flatir.ops.rsqrt import RsqrtOp


@public_api(
    document_under="ops_elementwise",
    dtype_constraints={"input": "T1", RETURN: "T1"},
    dtype_variables={"T1": FLOAT_TYPES},
)
def rsqrt(input: Tensor) -> Tensor:
    """Reciprocal square root, 1/sqrt(x), elementwise.

    Args:
        input: A floating-point tensor.

    Returns:
        A tensor of the same shape and dtype.

    .. code-block:: python

        x = tp.Tensor([0.5, 1.0, 2.0])
        y = tp.rsqrt(x)
        assert np.allclose(np.from_dlpack(y), 1 / np.sqrt(np.array([0.5, 1.0, 2.0], dtype=np.float32)), atol=1e-6)
    """
    return unary(input, RsqrtOp, "rsqrt")
