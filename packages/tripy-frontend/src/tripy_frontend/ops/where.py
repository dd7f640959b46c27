from typing import Any

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.where import Where
from tripy_flatir import dtypes
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES, to_tensors
from tripy_frontend.tensor import DimensionSize, Tensor


@public_api(
    document_under="ops_elementwise",
    dtype_constraints={"condition": "T2", "input": "T1", "other": "T1", RETURN: "T1"},
    dtype_variables={"T1": ALL_TYPES, "T2": (dtypes.bool,)},
)
def where(condition: Tensor, input: Any, other: Any) -> Tensor:
    """Elementwise ``input if condition else other``, with NumPy broadcasting of all three.

    Args:
        condition: A bool tensor.
        input: The values where `condition` is True: a tensor, or a Python number (which takes the
            other operand's dtype).
        other: The values where `condition` is False: a tensor or a Python number. At least one of
            `input` and `other` must be a tensor; both must have the same dtype.

    Returns:
        A tensor of the broadcast shape, with the dtype of `input` and `other`; a :class:`DimensionSize` when
        both are sizes and `condition` has rank 0 (as in nvtripy: a size chosen at run time).

    .. code-block:: python

        cond = tp.Tensor([[True, False], [False, True]])
        out = tp.where(cond, tp.Tensor([1.0, 2.0]), 0.0)
        assert out.tolist() == [[1.0, 0.0], [0.0, 2.0]]
        size = tp.where(tp.Tensor(False), tp.DimensionSize(2), tp.DimensionSize(3))
        assert isinstance(size, tp.DimensionSize) and int(size) == 3
    """
    if not isinstance(condition, Tensor):
        raise_error(
            f"tripy.where: condition must be a bool tripy.Tensor, but got {type(condition).__name__}.", _stack.capture()
        )
    a, b = to_tensors(input, other, "tripy.where")
    out = Tensor._from_op(Where, [condition, a, b])
    if isinstance(input, DimensionSize) and isinstance(other, DimensionSize) and condition.rank == 0:
        return DimensionSize._dynamic(out)
    return out
