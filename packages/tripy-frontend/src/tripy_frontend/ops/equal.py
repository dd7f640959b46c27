from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api
from tripy_frontend.ops.all import all as _all
from tripy_frontend.ops.binary import ALL_NUMERIC
from tripy_flatir import dtypes
from tripy_frontend.ops.unary import check_dtype
from tripy_frontend.tensor import Tensor


@public_api()
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
    check_dtype(input, ALL_NUMERIC + (dtypes.bool,), "tripy.equal")
    check_dtype(other, ALL_NUMERIC + (dtypes.bool,), "tripy.equal")
    if input.dtype is not other.dtype:
        raise_error(f"tripy.equal: input and other must have the same data type, but got {input.dtype} and "
                    f"{other.dtype}.", _stack.capture(), ["Use tripy.cast() to convert one of them."],
                    [input.stack_info, other.stack_info])
    if input.rank != other.rank:
        return False
    for a, b in zip(input.shape, other.shape):
        if int(a) != int(b):
            return False
    return bool(_all(input == other))
