from typing import Any, Optional, Sequence

from tripy_flatir import dtypes
from tripy_frontend.export import public_api
from tripy_frontend.ops.full import full, full_like
from tripy_frontend.tensor import Tensor


@public_api()
def ones(shape: Sequence[Any], dtype: dtypes.dtype = dtypes.float32) -> Tensor:
    """A tensor of ones.

    .. code-block:: python

        assert tp.ones((2,)).tolist() == [1.0, 1.0]
    """
    return full(shape, 1, dtype)


@public_api()
def ones_like(input: Tensor, dtype: Optional[dtypes.dtype] = None) -> Tensor:
    """A tensor of ones shaped like `input`.

    .. code-block:: python

        assert tp.ones_like(tp.Tensor([1, 2])).tolist() == [1, 1]
    """
    return full_like(input, 1, dtype)
