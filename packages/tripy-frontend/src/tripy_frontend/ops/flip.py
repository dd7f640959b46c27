from typing import Optional, Sequence, Union

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.flip import Flip
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES, normalize_dims
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_shape", dtype_constraints={"input": "T1", RETURN: "T1"}, dtype_variables={"T1": ALL_TYPES}
)
def flip(
    input: Tensor, dim: Optional[Union[int, Sequence[int]]] = None, *, dims: Optional[Union[int, Sequence[int]]] = None
) -> Tensor:
    """Reverse the order of elements along `dim` (an int, a sequence of ints, or None for every dim).
    Older nvtripy code spelled it ``dims=``, which is accepted too.

    .. code-block:: python

        input = tp.reshape(tp.arange(6, dtype=tp.int32), (2, 3))
        assert tp.flip(input).tolist() == [[5, 4, 3], [2, 1, 0]]
        assert tp.flip(input, dim=-1).tolist() == [[2, 1, 0], [5, 4, 3]]
        assert tp.flip(input, dims=[0]).tolist() == [[3, 4, 5], [0, 1, 2]]
    """
    if dims is not None:
        if dim is not None:
            raise_error("tripy.flip: give dim or dims (its older name), not both.", _stack.capture())
        dim = dims
    dims = normalize_dims(dim, input.rank, "tripy.flip")
    if not dims:
        return input
    return Tensor._from_op(Flip, [input], dims=dims)
