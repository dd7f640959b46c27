from typing import Optional, Sequence, Union

from tripy_flatir import dtypes
from tripy_frontend.export import public_api
from tripy_frontend.ops.binary import ALL_NUMERIC
from tripy_frontend.ops.cast import cast
from tripy_frontend.ops.reduce import reduce
from tripy_frontend.ops.unary import check_dtype
from tripy_frontend.tensor import Tensor


@public_api()
def any(input: Tensor, dim: Optional[Union[int, Sequence[int]]] = None, keepdim: bool = False) -> Tensor:
    """True where any element over `dim` (an int, a sequence of ints, or None for all dims) is True,
    or nonzero for numeric inputs. Over an empty dim the result is False. The result is a bool tensor.

    .. code-block:: python

        x = tp.Tensor([[False, False], [True, False]])
        assert tp.any(x, dim=1).tolist() == [False, True]
        assert bool(tp.any(x))
    """
    check_dtype(input, ALL_NUMERIC + (dtypes.bool,), "tripy.any")
    return reduce(cast(input, dtypes.bool), "or", dim, keepdim, "tripy.any", (dtypes.bool,))
