from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import FLOAT_TYPES
from tripy_frontend.ops.sigmoid import sigmoid
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_activations",
    dtype_constraints={"input": "T1", RETURN: "T1"},
    dtype_variables={"T1": FLOAT_TYPES},
)
def silu(input: Tensor) -> Tensor:
    r"""Sigmoid linear unit (swish), :math:`x \cdot \sigma(x)`, elementwise.

    Args:
        input: A floating-point tensor.

    Returns:
        A tensor of the same shape and dtype.

    .. code-block:: python

        x = np.array([-2.0, 0.0, 1.5], dtype=np.float32)
        out = tp.silu(tp.Tensor(x))
        assert np.allclose(np.from_dlpack(out), x / (1 + np.exp(-x)), atol=1e-6)
    """
    return input * sigmoid(input)
