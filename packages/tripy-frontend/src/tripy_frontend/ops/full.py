from typing import Any, Optional, Sequence

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.fill import Fill
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES, CONSTANT_TYPES, NUMBER_TYPES, constant, shape_arg
from tripy_frontend.tensor import Tensor
from tripy_frontend.ops.cast import cast


@public_api(
    document_under="ops_creation",
    dtype_constraints={"dtype": "T1", RETURN: "T1"},
    dtype_variables={"T1": CONSTANT_TYPES},
)
def full(shape: Sequence[Any], value: Any, dtype: dtypes.dtype = dtypes.float32) -> Tensor:
    """A tensor of the given shape with every element equal to `value`. Every dtype but ``tp.int4``
    (tripy cannot lower an int4 constant yet).

    Args:
        shape: The shape: ints and/or DimensionSizes (e.g. ``x.shape[0]``).
        value: A Python number or a rank-0 tensor.
        dtype: The data type.

    .. code-block:: python

        out = tp.full((2, 3), value=0.5)
        assert np.array_equal(np.from_dlpack(out), np.full((2, 3), 0.5, dtype=np.float32))
    """
    static, shape_tensor = shape_arg(shape, "tripy.full")
    if isinstance(value, Tensor):
        if value.rank != 0:
            raise_error(
                f"tripy.full: value must be a scalar, but got a tensor of shape {list(value.trace_tensor.shape)}.",
                _stack.capture(),
            )

        value_t = cast(value, dtype) if value.dtype is not dtype else value
    elif isinstance(value, NUMBER_TYPES):
        value_t = constant(value, dtype)
    else:
        raise_error(
            f"tripy.full: value must be a number or a rank-0 tensor, not {type(value).__name__}.", _stack.capture()
        )
    inputs = [value_t] + ([shape_tensor] if shape_tensor is not None else [])
    return Tensor._from_op(Fill, inputs, shape=static)


@public_api(
    document_under="ops_creation",
    dtype_constraints={"input": "T1", "dtype": "T2"},
    dtype_variables={"T1": ALL_TYPES, "T2": CONSTANT_TYPES},
)
def full_like(input: Tensor, value: Any, dtype: Optional[dtypes.dtype] = None) -> Tensor:
    """A tensor shaped like `input` filled with `value` (dtype defaults to input's). Every dtype but
    ``tp.int4`` (tripy cannot lower an int4 constant yet).

    .. code-block:: python

        out = tp.full_like(tp.Tensor([[1, 2], [3, 4]]), 7)
        assert out.tolist() == [[7, 7], [7, 7]]
    """
    return full(input.shape, value, dtype or input.dtype)
