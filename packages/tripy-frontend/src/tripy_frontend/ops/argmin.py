from typing import Optional

from tripy_flatir import dtypes
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.argmax import arg_reduce
from tripy_frontend.ops.common import NUMERIC_TYPES
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_reductions",
    dtype_constraints={"input": "T1", RETURN: "T2"},
    dtype_variables={"T1": NUMERIC_TYPES, "T2": (dtypes.int32,)},
)
def argmin(input: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The index (int32) of the smallest value along `dim`; over the flattened input if `dim` is None.
    Ties give the first index; NaN counts as the smallest value (as in NumPy: the first NaN wins).

    Args:
        input: A floating-point or integer tensor.
        dim: The dim to reduce, or None.
        keepdim: Whether to keep the reduced dim (with size 1); with ``dim=None``, every dim is kept.

    A dim of size 0 has no index to give: that raises, as in NumPy (in a compiled program, a dynamic dim that
    turns out empty at run time gives 0 instead, as there is no error at run time).

    .. code-block:: python

        x = tp.Tensor([[1.0, 0.0, 3.0], [0.5, 0.5, 2.0]])
        assert tp.argmin(x, dim=1).tolist() == [1, 0]
        assert tp.argmin(x, dim=0, keepdim=True).tolist() == [[1, 0, 1]]
    """
    return arg_reduce(input, "min", dim, keepdim)
