from typing import Sequence

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.concatenate import Concatenate
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES, normalize_dim
from tripy_frontend.tensor import Tensor


def check_tensor_list(tensors: Sequence[Tensor], what: str) -> None:
    """A non-empty sequence of tensors of one rank (their dtypes are declared by each op)."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence) or not tensors:
        raise_error(
            f"{what} expects a non-empty list or tuple of tensors, but got "
            f"{tensors if isinstance(tensors, Sequence) else type(tensors).__name__}.",
            _stack.capture(),
        )
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise_error(
                f"{what}: element {i} of `tensors` is a {type(t).__name__}, not a tripy.Tensor.", _stack.capture()
            )
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.rank != first.rank:
            raise_error(
                f"{what}: all tensors must have the same rank, but tensor 0 has shape "
                f"{list(first.trace_tensor.shape)} and tensor {i} has shape {list(t.trace_tensor.shape)}.",
                _stack.capture(),
                [],
                [first.stack_info, t.stack_info],
            )


@public_api(
    document_under="ops_shape", dtype_constraints={"tensors": "T1", RETURN: "T1"}, dtype_variables={"T1": ALL_TYPES}
)
def concatenate(tensors: Sequence[Tensor], dim: int) -> Tensor:
    """Join tensors along an existing dim. They must have the same rank and dtype, and the same size
    in every other dim.

    .. code-block:: python

        a = tp.zeros((1, 2))
        b = tp.ones((3, 2))
        out = tp.concatenate([a, b], dim=0)
        assert out.shape == (4, 2) and out.tolist()[1] == [1.0, 1.0]
    """
    check_tensor_list(tensors, "tripy.concatenate")
    rank = tensors[0].rank
    if rank == 0:
        raise_error(
            "tripy.concatenate: rank-0 tensors cannot be concatenated.",
            _stack.capture(),
            ["Use tripy.stack() to join scalars into a 1-D tensor."],
        )
    dim = normalize_dim(dim, rank, "tripy.concatenate")
    if len(tensors) == 1:
        return tensors[0]
    return Tensor._from_op(Concatenate, list(tensors), dim=dim)
