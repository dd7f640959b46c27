from typing import Sequence, Union

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_flatir.tensor import DYNAMIC
from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import ALL_TYPES, normalize_dims
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.ops.reshape import reshape
from tripy_frontend.tensor import Tensor


@public_api(document_under="ops_shape")
@TENSOR_METHOD_REGISTRY("squeeze")
@dtype_rules({"input": "T1", RETURN: "T1"}, {"T1": ALL_TYPES})
def squeeze(input: Tensor, dims: Union[int, Sequence[int]]) -> Tensor:
    """Remove size-1 dims (also ``t.squeeze(dims)``).

    Args:
        input: The input tensor.
        dims: The dim or dims to remove; each must have size 1. A dim whose size is only known at run
            time is assumed to be 1. As in PyTorch, a rank-0 tensor accepts dims 0 and -1 and comes back
            unchanged (NumPy raises).

    .. code-block:: python

        input = tp.zeros((1, 2, 1))
        assert tp.squeeze(input, 0).shape == (2, 1)
        assert input.squeeze((0, -1)).shape == (2,)
    """
    dims_t = normalize_dims(dims, input.rank, "tripy.squeeze")
    if input.rank == 0:
        return input
    static = input.trace_tensor.shape
    bad = [d for d in dims_t if static[d] not in (1, DYNAMIC)]
    if bad:
        raise_error(
            f"tripy.squeeze: only dims of size 1 can be removed, but dim {bad[0]} of the input (shape "
            f"{list(static)}) has size {static[bad[0]]}.",
            _stack.capture(),
            [],
            [input.stack_info],
        )
    shape = input.shape
    return reshape(input, [s for d, s in enumerate(shape) if d not in dims_t])
