import math

from tripy_flatir.ops.erf import ErfOp
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import FLOAT_TYPES
from tripy_frontend.ops.unary import unary
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_activations",
    dtype_constraints={"input": "T1", RETURN: "T1"},
    dtype_variables={"T1": FLOAT_TYPES},
)
def gelu(input: Tensor) -> Tensor:
    r"""Gaussian Error Linear Unit, elementwise, in its exact (erf) form, as nvtripy and PyTorch's default:

    :math:`\text{gelu}(x) = 0.5 x (1 + \text{erf}(x / \sqrt{2}))`

    Args:
        input: A floating-point tensor.

    Returns:
        A tensor of the same shape and dtype.

    .. code-block:: python

        import math
        x = [-2.0, -0.5, 0.0, 1.0, 3.0]
        out = tp.gelu(tp.Tensor(x))
        expected = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x]
        assert np.allclose(np.from_dlpack(out), expected, atol=1e-6)
    """
    return 0.5 * input * (1.0 + unary(input * (1.0 / math.sqrt(2.0)), ErfOp, "erf"))
