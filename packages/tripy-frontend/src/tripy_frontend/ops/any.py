from typing import Optional, Sequence, Union

from tripy_flatir import dtypes
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.cast import cast
from tripy_frontend.ops.common import COMPARABLE_TYPES
from tripy_frontend.ops.reduce import reduce
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_reductions",
    dtype_constraints={"input": "T1", RETURN: "T2"},
    dtype_variables={"T1": COMPARABLE_TYPES, "T2": (dtypes.bool,)},
)
def any(input: Tensor, dim: Optional[Union[int, Sequence[int]]] = None, keepdim: bool = False) -> Tensor:
    """True where any element over `dim` (an int, a sequence of ints, or None for all dims) is True,
    or nonzero for numeric inputs. Over an empty dim the result is False. The result is a bool tensor.

    .. code-block:: python

        x = tp.Tensor([[False, False], [True, False]])
        assert tp.any(x, dim=1).tolist() == [False, True]
        assert bool(tp.any(x))
    """
    return reduce(cast(input, dtypes.bool), "or", dim, keepdim, "tripy.any")
