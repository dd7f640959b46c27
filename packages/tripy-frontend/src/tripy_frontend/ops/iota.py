from typing import Any, Optional, Sequence

from tripy_flatir import dtypes
from tripy_trace.ops.iota import Iota
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES, IOTA_TYPES, normalize_dim, shape_arg
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_creation", dtype_constraints={"dtype": "T1", RETURN: "T1"}, dtype_variables={"T1": IOTA_TYPES}
)
def iota(shape: Sequence[Any], dim: int = 0, dtype: dtypes.dtype = dtypes.float32) -> Tensor:
    """A tensor whose values count up 0, 1, 2, ... along `dim`. Every dtype but ``tp.bool`` (StableHLO's
    iota has no bool form).

    .. code-block:: python

        out = tp.iota((2, 3), dim=1, dtype=tp.int32)
        assert out.tolist() == [[0, 1, 2], [0, 1, 2]]
    """
    static, shape_tensor = shape_arg(shape, "tripy.iota")
    dim = normalize_dim(dim, len(static), "tripy.iota")
    return Tensor._from_op(Iota, [shape_tensor] if shape_tensor is not None else [], dim=dim, shape=static, dtype=dtype)


@public_api(
    document_under="ops_creation",
    dtype_constraints={"input": "T1", "dtype": "T2"},
    dtype_variables={"T1": ALL_TYPES, "T2": IOTA_TYPES},
)
def iota_like(input: Tensor, dim: int = 0, dtype: Optional[dtypes.dtype] = None) -> Tensor:
    """``iota`` with the shape (and by default the dtype) of `input`; the dtype cannot be ``tp.bool``.

    .. code-block:: python

        out = tp.iota_like(tp.zeros((3,)))
        assert out.tolist() == [0.0, 1.0, 2.0]
    """
    return iota(input.shape, dim, dtype or input.dtype)
