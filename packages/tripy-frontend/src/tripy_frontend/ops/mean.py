import math
from typing import Optional, Sequence, Union

from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import FLOAT_TYPES, normalize_dims
from tripy_frontend.ops.reduce import reduce
from tripy_frontend.tensor import Tensor
from tripy_frontend.ops.cast import cast


@public_api(
    document_under="ops_reductions",
    dtype_constraints={"input": "T1", RETURN: "T1"},
    dtype_variables={"T1": FLOAT_TYPES},
)
def mean(input: Tensor, dim: Optional[Union[int, Sequence[int]]] = None, keepdim: bool = False) -> Tensor:
    """Arithmetic mean over `dim` (an int, a sequence of ints, or None for all dims). Floating-point
    inputs only (as in PyTorch); cast integers first.

    .. code-block:: python

        x = tp.Tensor([[1.0, 2.0], [3.0, 5.0]])
        assert tp.mean(x, dim=1).tolist() == [1.5, 4.0]
    """
    dims = normalize_dims(dim, input.rank, "tripy.mean")
    if input.rank == 0:  # as in PyTorch, the mean of a scalar over dim 0 / -1 is the scalar
        return input
    total = reduce(input, "sum", dims, keepdim, "tripy.mean")
    static = [input.trace_tensor.shape[d] for d in dims]
    if all(s >= 0 for s in static):
        return total / float(math.prod(static))

    count: Tensor = input.shape[dims[0]]
    for d in dims[1:]:
        count = count * input.shape[d]
    return total / cast(count, input.dtype)
