from typing import Any

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES, normalize_dim
from tripy_frontend.ops.expand import expand
from tripy_frontend.ops.reshape import reshape
from tripy_frontend.ops.unsqueeze import unsqueeze
from tripy_frontend.tensor import DimensionSize, Tensor


@public_api(
    document_under="ops_shape", dtype_constraints={"input": "T1", RETURN: "T1"}, dtype_variables={"T1": ALL_TYPES}
)
def repeat(input: Tensor, repeats: Any, dim: int) -> Tensor:
    """Repeat each element `repeats` times, one copy after another, along `dim` (like ``numpy.repeat``
    with an int `repeats`).

    Args:
        input: The input tensor.
        repeats: How many times to repeat each element: a non-negative int or a DimensionSize.
        dim: The dim along which to repeat.

    .. code-block:: python

        input = tp.Tensor([[1, 2], [3, 4]])
        assert tp.repeat(input, 2, dim=0).tolist() == [[1, 2], [1, 2], [3, 4], [3, 4]]
        assert tp.repeat(input, 3, dim=-1).tolist() == [[1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4]]
    """

    if not isinstance(repeats, (int, DimensionSize)) or isinstance(repeats, bool):
        raise_error(
            f"tripy.repeat: repeats must be an int or a DimensionSize, but got {type(repeats).__name__}.",
            _stack.capture(),
        )
    if isinstance(repeats, int) and repeats < 0:
        raise_error(f"tripy.repeat: repeats must be non-negative, but got {repeats}.", _stack.capture())
    dim = normalize_dim(dim, input.rank, "tripy.repeat")
    if input.rank == 0:
        raise_error("tripy.repeat: the input must have at least one dim.", _stack.capture())
    # [a, b] -> [[a], [b]] -> [[a, a], [b, b]] -> [a, a, b, b]
    shape = input.shape
    copies = expand(unsqueeze(input, dim + 1), shape[: dim + 1] + (repeats,) + shape[dim + 1 :])
    return reshape(copies, shape[:dim] + (shape[dim] * repeats,) + shape[dim + 1 :])
