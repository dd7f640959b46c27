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
def max(input: Tensor, dim: Optional[Union[int, Sequence[int]]] = None, keepdim: bool = False) -> Tensor:
    """Maximum over `dim` (an int, a sequence of ints, or None for all dims). With keepdim=True the
    reduced dims stay, with size 1. NaN propagates (as in NumPy). Reducing over a dim of size 0 raises, as in
    NumPy; in a compiled program a dynamic dim that turns out empty at run time gives the identity instead
    (-inf for max, inf for min; for integers the dtype's smallest or largest value), as there is no error at
    run time.

    .. code-block:: python

        x = tp.reshape(tp.arange(6), (2, 3))
        assert np.array_equal(np.from_dlpack(tp.max(x, dim=1)), np.max(np.arange(6, dtype=np.float32).reshape(2, 3), axis=1))
        assert tp.max(x, dim=0, keepdim=True).shape == (1, 3)
    """
    return reduce(input, "max", dim, keepdim, "tripy.max")
