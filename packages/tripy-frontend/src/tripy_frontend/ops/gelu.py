import math

from tripy_frontend.export import public_api
from tripy_frontend.ops.tanh import tanh
from tripy_frontend.ops.unary import FLOAT_TYPES, check_dtype
from tripy_frontend.tensor import Tensor


@public_api()
def gelu(input: Tensor) -> Tensor:
    r"""Gaussian Error Linear Unit with the tanh approximation, elementwise:

    :math:`\text{gelu}(x) = 0.5 x (1 + \tanh(\sqrt{2 / \pi} (x + 0.044715 x^3)))`

    This is ``torch.nn.functional.gelu(x, approximate="tanh")`` (the form nvtripy has used); it differs
    from the exact, erf-based GELU by less than about 1e-3.

    Args:
        input: A floating-point tensor.

    Returns:
        A tensor of the same shape and dtype.

    .. code-block:: python

        x = np.array([-2.0, -0.5, 0.0, 1.0, 3.0], dtype=np.float32)
        out = tp.gelu(tp.Tensor(x))
        expected = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
        assert np.allclose(np.from_dlpack(out), expected, atol=1e-6)
    """
    check_dtype(input, FLOAT_TYPES, "tripy.gelu")
    inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * (input * input * input))
    return 0.5 * input * (1.0 + tanh(inner))
