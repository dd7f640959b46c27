from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import ALL_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.ops.reshape import reshape
from tripy_frontend.tensor import Tensor


@public_api(document_under="ops_shape")
@TENSOR_METHOD_REGISTRY("unsqueeze")
@dtype_rules({"input": "T1", RETURN: "T1"}, {"T1": ALL_TYPES})
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dim of size 1 before position `dim` (also ``t.unsqueeze(dim)``); a negative `dim` counts
    from the end of the output, so -1 appends a dim.

    .. code-block:: python

        input = tp.zeros((2, 3))
        assert tp.unsqueeze(input, 1).shape == (2, 1, 3)
        assert input.unsqueeze(-1).shape == (2, 3, 1)
    """
    rank = input.rank
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise_error(f"tripy.unsqueeze: dim must be an int, but got {type(dim).__name__}.", _stack.capture())
    if not -(rank + 1) <= dim <= rank:
        raise_error(
            f"tripy.unsqueeze: dim {dim} is out of range for a tensor of rank {rank}.",
            _stack.capture(),
            [f"Use a dim in [{-(rank + 1)}, {rank}]."],
        )
    dim = dim % (rank + 1)
    shape = input.shape
    return reshape(input, shape[:dim] + (1,) + shape[dim:])
