from tripy_frontend.export import public_api
from tripy_frontend.ops.sigmoid import sigmoid
from tripy_frontend.ops.unary import FLOAT_TYPES, check_dtype
from tripy_frontend.tensor import Tensor


@public_api()
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
    check_dtype(input, FLOAT_TYPES, "tripy.silu")
    return input * sigmoid(input)
