from tripy_frontend.export import public_api
from tripy_frontend.ops.all import all as _all
from tripy_frontend.ops.common import COMPARABLE_TYPES
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_reductions",
    dtype_constraints={"input": "T1", "other": "T1"},
    dtype_variables={"T1": COMPARABLE_TYPES},
)
def equal(input: Tensor, other: Tensor) -> bool:
    """Whether `input` and `other` have the same shape and the same elements. NaN is not equal to
    itself. The comparison runs as a tripy program; only the final bool is read back.

    Args:
        input: The first tensor.
        other: A tensor of the same dtype.

    Returns:
        A Python bool.

    .. code-block:: python

        a = tp.ones((1, 2))
        assert tp.equal(a, tp.ones((1, 2)))
        assert not tp.equal(a, tp.ones((2, 2)))
        assert not tp.equal(a, tp.zeros((1, 2)))
    """
    if input.rank != other.rank:
        return False
    for a, b in zip(input.shape, other.shape):
        if int(a) != int(b):
            return False
    return bool(_all(input == other))
