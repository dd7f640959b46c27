from tripy_frontend.export import public_api
from tripy_frontend.ops.binary import ALL_NUMERIC
from tripy_frontend.ops.maximum import maximum
from tripy_frontend.ops.unary import check_dtype
from tripy_frontend.tensor import Tensor


@public_api()
def relu(input: Tensor) -> Tensor:
    r"""Rectified linear unit, :math:`\max(x, 0)`, elementwise. NaN stays NaN (as in PyTorch).

    Args:
        input: A floating-point or integer tensor.

    Returns:
        A tensor of the same shape and dtype.

    .. code-block:: python

        out = tp.relu(tp.Tensor([-1.5, 0.0, 2.0]))
        assert out.tolist() == [0.0, 0.0, 2.0]
    """
    check_dtype(input, ALL_NUMERIC, "tripy.relu")
    return maximum(input, 0)
