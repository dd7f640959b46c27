import math
from typing import Optional, Sequence, Union

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.cast import cast
from tripy_frontend.ops.common import FLOAT_TYPES, normalize_dims
from tripy_frontend.ops.maximum import maximum
from tripy_frontend.ops.mean import mean
from tripy_frontend.ops.sum import sum as _sum
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_reductions",
    dtype_constraints={"input": "T1", RETURN: "T1"},
    dtype_variables={"T1": FLOAT_TYPES},
)
def var(
    input: Tensor, dim: Optional[Union[int, Sequence[int]]] = None, keepdim: bool = False, correction: int = 1
) -> Tensor:
    r"""Variance over `dim` (an int, a sequence of ints, or None for all dims):

    :math:`\frac{1}{\max(0, N - \text{correction})} \sum_{i=1}^N (x_i - \bar{x})^2`

    where :math:`N` is the number of elements reduced. The default ``correction=1`` is Bessel's
    correction (the sample variance, as in PyTorch); ``correction=0`` gives NumPy's default. When
    :math:`N \le` correction the result is ``inf`` or ``nan``, as in PyTorch.

    Args:
        input: A floating-point tensor.
        dim: The dim or dims to reduce; all of them if None.
        keepdim: Whether to keep the reduced dims (with size 1).
        correction: Subtracted from :math:`N` in the divisor.

    .. code-block:: python

        x = tp.reshape(tp.arange(6, dtype=tp.float32), (2, 3))
        out = tp.var(x, dim=1, keepdim=True)
        expected = np.var(np.arange(6, dtype=np.float32).reshape(2, 3), axis=1, ddof=1, keepdims=True)
        assert np.allclose(np.from_dlpack(out), expected)
    """
    if not isinstance(correction, int) or isinstance(correction, bool):
        raise_error(f"tripy.var: correction must be an int, but got {type(correction).__name__}.", _stack.capture())
    dims = normalize_dims(dim, input.rank, "tripy.var") if input.rank else ()
    centered = input - mean(input, dim=dims, keepdim=True)
    total = _sum(centered * centered, dim=dims, keepdim=keepdim)
    static = [input.trace_tensor.shape[d] for d in dims]
    if all(s >= 0 for s in static):
        return total / float(max(0, math.prod(static) - correction))
    count: Tensor = input.shape[dims[0]]
    for d in dims[1:]:
        count = count * input.shape[d]
    return total / cast(maximum(count - correction, 0), input.dtype)
