from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.cast import Cast
from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import ALL_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor


@public_api(document_under="ops_types")
@TENSOR_METHOD_REGISTRY("cast")
@dtype_rules({"input": "T1", "dtype": "T2", RETURN: "T2"}, {"T1": ALL_TYPES, "T2": ALL_TYPES})
def cast(input: Tensor, dtype: dtypes.dtype) -> Tensor:
    """Convert elementwise to `dtype` (also ``t.cast(dtype)``). Float to int truncates toward zero; values out
    of the integer's range saturate to its smallest or largest value and NaN becomes 0 (NumPy leaves these
    undefined); to bool, nonzero (and NaN) becomes True.

    .. code-block:: python

        out = tp.cast(tp.Tensor([1.7, -1.7]), tp.int32)
        assert out.tolist() == [1, -1]
    """
    if not isinstance(dtype, dtypes.dtype):
        raise_error(f"tripy.cast: dtype must be a tripy dtype such as tp.float32, not {dtype!r}.", _stack.capture())
    if input.dtype is dtype:
        return input
    return Tensor._from_op(Cast, [input], dtype=dtype)
