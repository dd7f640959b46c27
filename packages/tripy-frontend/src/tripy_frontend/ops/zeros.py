from typing import Any, Optional, Sequence

from tripy_flatir import dtypes
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES, CONSTANT_TYPES
from tripy_frontend.ops.full import full, full_like
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_creation",
    dtype_constraints={"dtype": "T1", RETURN: "T1"},
    dtype_variables={"T1": CONSTANT_TYPES},
)
def zeros(shape: Sequence[Any], dtype: dtypes.dtype = dtypes.float32) -> Tensor:
    """A tensor of zeros. Every dtype but ``tp.int4`` (tripy cannot lower an int4 constant yet).

    .. code-block:: python

        assert tp.zeros((2,)).tolist() == [0.0, 0.0]
    """
    return full(shape, 0, dtype)


@public_api(
    document_under="ops_creation",
    dtype_constraints={"input": "T1", "dtype": "T2"},
    dtype_variables={"T1": ALL_TYPES, "T2": CONSTANT_TYPES},
)
def zeros_like(input: Tensor, dtype: Optional[dtypes.dtype] = None) -> Tensor:
    """A tensor of zeros shaped like `input`. Every dtype but ``tp.int4`` (tripy cannot lower an int4 constant yet).

    .. code-block:: python

        assert tp.zeros_like(tp.Tensor([1, 2])).tolist() == [0, 0]
    """
    return full_like(input, 0, dtype)
