from typing import Any, Optional

from tripy_flatir import dtypes
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import NUMERIC_TYPES, normalize_dim
from tripy_frontend.ops.reshape import reshape
from tripy_frontend.tensor import Tensor
from tripy_trace.ops.arg_reduce import ArgReduce


def arg_reduce(input: Tensor, mode: str, dim: Optional[Any], keepdim: bool) -> Tensor:
    """Shared body of argmax and argmin."""
    what = f"tripy.arg{mode}"
    if dim is None:  # over the flattened input
        out = Tensor._from_op(ArgReduce, [reshape(input, (-1,))], mode=mode, dim=0, keepdim=False)
        return reshape(out, (1,) * input.rank) if keepdim else out
    d = normalize_dim(dim, input.rank, what)
    if input.rank == 0:
        return Tensor._from_op(ArgReduce, [reshape(input, (1,))], mode=mode, dim=0, keepdim=False)
    return Tensor._from_op(ArgReduce, [input], mode=mode, dim=d, keepdim=bool(keepdim))


@public_api(
    document_under="ops_reductions",
    dtype_constraints={"input": "T1", RETURN: "T2"},
    dtype_variables={"T1": NUMERIC_TYPES, "T2": (dtypes.int32,)},
)
def argmax(input: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The index (int32) of the largest value along `dim`; over the flattened input if `dim` is None.
    Ties give the first index; NaN counts as the largest value (as in NumPy).

    Args:
        input: A floating-point or integer tensor.
        dim: The dim to reduce, or None.
        keepdim: Whether to keep the reduced dim (with size 1); with ``dim=None``, every dim is kept.

    A dim of size 0 has no index to give: that raises, as in NumPy (in a compiled program, a dynamic dim that
    turns out empty at run time gives 0 instead, as there is no error at run time).

    .. code-block:: python

        x = tp.Tensor([[1.0, 0.0, 3.0], [0.5, 2.0, 2.0]])
        assert tp.argmax(x, dim=1).tolist() == [2, 1]
        assert tp.argmax(x).tolist() == 2
    """
    return arg_reduce(input, "max", dim, keepdim)
