from typing import Optional, Sequence, Union

from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import NUMERIC_TYPES
from tripy_frontend.ops.reduce import reduce
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_reductions",
    dtype_constraints={"input": "T1", RETURN: "T1"},
    dtype_variables={"T1": NUMERIC_TYPES},
)
def sum(input: Tensor, dim: Optional[Union[int, Sequence[int]]] = None, keepdim: bool = False) -> Tensor:
    """Sum over `dim` (an int, a sequence of ints, or None for all dims). With keepdim=True the
    reduced dims stay, with size 1.

    .. code-block:: python

        x = tp.reshape(tp.arange(6), (2, 3))
        assert np.array_equal(np.from_dlpack(tp.sum(x, dim=1)), np.sum(np.arange(6, dtype=np.float32).reshape(2, 3), axis=1))
        assert tp.sum(x, dim=0, keepdim=True).shape == (1, 3)
    """
    return reduce(input, "sum", dim, keepdim, "tripy.sum")
