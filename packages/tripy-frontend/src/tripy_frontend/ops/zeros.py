from typing import Any, Optional, Sequence

from tripy_flatir import dtypes
from tripy_frontend.export import public_api
from tripy_frontend.ops.full import full, full_like
from tripy_frontend.tensor import Tensor


@public_api()
def zeros(shape: Sequence[Any], dtype: dtypes.dtype = dtypes.float32) -> Tensor:
    """A tensor of zeros.

    .. code-block:: python

        assert tp.zeros((2,)).tolist() == [0.0, 0.0]
    """
    return full(shape, 0, dtype)


@public_api()
def zeros_like(input: Tensor, dtype: Optional[dtypes.dtype] = None) -> Tensor:
    """A tensor of zeros shaped like `input`.

    .. code-block:: python

        assert tp.zeros_like(tp.Tensor([1, 2])).tolist() == [0, 0]
    """
    return full_like(input, 0, dtype)
