from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import NUMERIC_TYPES
from tripy_frontend.ops.maximum import maximum
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_activations",
    dtype_constraints={"input": "T1", RETURN: "T1"},
    dtype_variables={"T1": NUMERIC_TYPES},
)
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
    return maximum(input, 0)
