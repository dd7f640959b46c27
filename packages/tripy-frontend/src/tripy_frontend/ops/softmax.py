from typing import Optional

from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import FLOAT_TYPES, normalize_dim
from tripy_frontend.ops.exp import exp
from tripy_frontend.ops.max import max as _max
from tripy_frontend.ops.where import where
from tripy_frontend.ops.sum import sum as _sum
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_activations",
    dtype_constraints={"input": "T1", RETURN: "T1"},
    dtype_variables={"T1": FLOAT_TYPES},
)
def softmax(input: Tensor, dim: Optional[int] = None) -> Tensor:
    r"""Softmax along `dim`: :math:`\text{softmax}(x_i) = \frac{e^{x_i}}{\sum_j e^{x_j}}`, so each slice
    along `dim` lies in [0, 1] and sums to 1. With ``dim=None`` it is taken over all elements together
    (the flattened input), keeping the input's shape.

    Computed stably: the maximum along `dim` is subtracted before exponentiating, so large inputs do
    not overflow. A slice holding NaN, or +inf, comes out all NaN (as in NumPy and PyTorch).

    Args:
        input: A floating-point tensor.
        dim: The dim to normalize along, or None.

    Returns:
        A tensor of the same shape and dtype.

    .. code-block:: python

        x = tp.Tensor([[1.0, 2.0, 3.0], [1000.0, 1000.0, 1000.0]])
        out = tp.softmax(x, dim=1)
        e = np.exp(np.array([1.0, 2.0, 3.0]) - 3.0)
        assert np.allclose(np.from_dlpack(out), [e / e.sum(), [1 / 3] * 3], atol=1e-6)
    """
    dims = None if dim is None else normalize_dim(dim, input.rank, "tripy.softmax")
    if 0 in input.trace_tensor.shape:
        return input  # nothing to normalize (and an empty dim has no maximum)
    top = _max(input, dim=dims, keepdim=True)
    # Exactly 0 at the (finite) maximum: XLA:CPU may contract the op that produced `input` into the subtraction (a
    # fused multiply-add), which leaves the maximum a residual; with inputs near 1e30 that residual is -1e22, every
    # exp() is 0 and the result NaN.
    at_top = (input == top) & (top - top == 0.0)
    shifted = where(at_top, 0.0, input - top)
    e = exp(shifted)
    # e * (1 / sum) rather than e / sum: XLA:CPU rewrites the latter pattern to oneDNN's softmax, which
    # ignores NaN (a row holding NaN, or +inf, must come out all NaN, as in NumPy and PyTorch).
    return e * (1.0 / _sum(e, dim=dims, keepdim=True))
