from typing import Sequence

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.permute import Permute
from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import ALL_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor


@public_api(document_under="ops_shape")
@TENSOR_METHOD_REGISTRY("permute")
@dtype_rules({"input": "T1", RETURN: "T1"}, {"T1": ALL_TYPES})
def permute(input: Tensor, perm: Sequence[int]) -> Tensor:
    """Reorder dims: output dim i is input dim ``perm[i]`` (also ``t.permute(perm)``). Negative dims count
    from the end.

    .. code-block:: python

        out = tp.permute(tp.zeros((2, 3, 4)), (2, 0, 1))
        assert out.shape == (4, 2, 3)
    """
    rank = input.rank
    if not all(isinstance(p, int) for p in perm):
        raise_error(f"tripy.permute: perm must be a sequence of ints, but got {perm}.", _stack.capture())
    normalized = tuple(p % rank if -rank <= p < rank else p for p in perm) if rank else tuple(perm)
    return Tensor._from_op(Permute, [input], perm=normalized)
