from typing import Sequence

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_flatir.tensor import DYNAMIC
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES
from tripy_frontend.ops.concatenate import check_tensor_list, concatenate
from tripy_frontend.ops.unsqueeze import unsqueeze
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_shape", dtype_constraints={"tensors": "T1", RETURN: "T1"}, dtype_variables={"T1": ALL_TYPES}
)
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors of the same shape along a new dim, inserted at position `dim` of the output.

    .. code-block:: python

        a = tp.Tensor([1, 2, 3])
        b = tp.Tensor([4, 5, 6])
        assert tp.stack([a, b]).tolist() == [[1, 2, 3], [4, 5, 6]]
        assert tp.stack([a, b], dim=1).tolist() == [[1, 4], [2, 5], [3, 6]]
    """
    check_tensor_list(tensors, "tripy.stack")
    first = tensors[0]
    for i, t in enumerate(tensors):
        a, b = first.trace_tensor.shape, t.trace_tensor.shape
        if any(x != y and DYNAMIC not in (x, y) for x, y in zip(a, b)):
            raise_error(
                f"tripy.stack: all tensors must have the same shape, but tensor 0 has shape {list(a)} and "
                f"tensor {i} has shape {list(b)}.",
                _stack.capture(),
                [],
                [first.stack_info, t.stack_info],
            )
    rank = first.rank
    if not isinstance(dim, int) or not -(rank + 1) <= dim <= rank:
        raise_error(
            f"tripy.stack: dim {dim} is out of range for stacking tensors of rank {rank}.",
            _stack.capture(),
            [f"Use a dim in [{-(rank + 1)}, {rank}]."],
        )
    dim = dim % (rank + 1)
    return concatenate([unsqueeze(t, dim) for t in tensors], dim)
