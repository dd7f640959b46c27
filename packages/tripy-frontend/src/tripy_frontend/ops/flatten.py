import math

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import ALL_TYPES, normalize_dim
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.ops.reshape import reshape
from tripy_frontend.tensor import Tensor


@public_api(document_under="ops_shape")
@TENSOR_METHOD_REGISTRY("flatten")
@dtype_rules({"input": "T1", RETURN: "T1"}, {"T1": ALL_TYPES})
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims `start_dim` through `end_dim` (inclusive) into one (also ``t.flatten(...)``). A rank-0
    tensor becomes a 1-element 1-D tensor, as in PyTorch.

    .. code-block:: python

        input = tp.zeros((2, 3, 4, 5))
        assert tp.flatten(input).shape == (120,)
        assert input.flatten(start_dim=1, end_dim=2).shape == (2, 12, 5)
    """
    rank = input.rank
    start = normalize_dim(start_dim, rank, "tripy.flatten")
    end = normalize_dim(end_dim, rank, "tripy.flatten")
    if rank == 0:
        return reshape(input, (1,))
    if start > end:
        raise_error(
            f"tripy.flatten: start_dim ({start_dim}) must not come after end_dim ({end_dim}) for a tensor of "
            f"rank {rank}.",
            _stack.capture(),
        )
    shape = input.shape
    merged = math.prod(shape[start : end + 1])  # DimensionSizes: folds when static
    return reshape(input, shape[:start] + (merged,) + shape[end + 1 :])
