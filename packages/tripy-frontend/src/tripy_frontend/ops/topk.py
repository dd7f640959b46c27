from typing import Tuple

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.topk import TopK
from tripy_flatir import dtypes
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import NUMERIC_TYPES, normalize_dim
from tripy_frontend.ops.reshape import reshape
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_reductions",
    dtype_constraints={"input": "T1", RETURN: ("T1", "T2")},
    dtype_variables={"T1": NUMERIC_TYPES, "T2": (dtypes.int32,)},
)
def topk(input: Tensor, k: int, dim: int) -> Tuple[Tensor, Tensor]:
    """The `k` largest values along `dim`, largest first, and their indices (int32).

    Equal values keep their original order (the lower index first); NaN counts as the largest value.

    Args:
        input: A floating-point or integer tensor.
        k: How many values to take (at most the size of `dim`).
        dim: The dim to search along.

    Returns:
        ``(values, indices)``, both with the shape of `input` except that `dim` has size `k`.

    .. code-block:: python

        x = tp.iota((1, 5), dim=1) + 2.5
        values, indices = tp.topk(x, k=2, dim=1)
        assert values.tolist() == [[6.5, 5.5]]
        assert indices.tolist() == [[4, 3]]
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 0:
        raise_error(f"tripy.topk: k must be a non-negative int, but got {k!r}.", _stack.capture())
    d = normalize_dim(dim, input.rank, "tripy.topk")
    if input.rank == 0:
        values, indices = Tensor._from_op(TopK, [reshape(input, (1,))], num_outputs=2, k=k, dim=0)
        return reshape(values, ()), reshape(indices, ())
    values, indices = Tensor._from_op(TopK, [input], num_outputs=2, k=k, dim=d)
    return values, indices
