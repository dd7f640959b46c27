import math
from typing import Any

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace import lowering
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.cast import cast
from tripy_frontend.ops.common import CONSTANT_TYPES, constant
from tripy_frontend.ops.where import where
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_elementwise",
    dtype_constraints={"input": "T1", "mask": "T2", RETURN: "T1"},
    dtype_variables={"T1": CONSTANT_TYPES, "T2": (dtypes.bool,)},
)
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """`input` with the elements where `mask` is True replaced by `value`.

    Args:
        input: The input tensor (any dtype but ``tp.int4``: tripy cannot lower an int4 constant yet).
        mask: A bool tensor that broadcasts to the shape of `input`.
        value: A Python number or a rank-0 tensor; it is converted to the dtype of `input`.

    Returns:
        A tensor of the same shape and dtype as `input`.

    .. code-block:: python

        mask = tp.Tensor([[True, False], [True, True]])
        out = tp.masked_fill(tp.zeros((2, 2)), mask, -1.0)
        assert out.tolist() == [[-1.0, 0.0], [-1.0, -1.0]]
    """
    info = _stack.capture()
    for name, t in (("input", input), ("mask", mask)):
        if not isinstance(t, Tensor):
            raise_error(f"tripy.masked_fill: {name} must be a tripy.Tensor, but got {type(t).__name__}.", info)
    in_shape, mask_shape = input.trace_tensor.shape, mask.trace_tensor.shape
    if mask.rank > input.rank or lowering.broadcast_shape(in_shape, mask_shape) != tuple(in_shape):
        raise_error(
            f"tripy.masked_fill: the mask (shape {list(mask_shape)}) does not broadcast to the shape "
            f"of the input ({list(in_shape)}).",
            info,
            ["Each mask dimension (aligned from the right) must equal the input's, or be 1."],
            [input.stack_info, mask.stack_info],
        )
    if isinstance(value, Tensor):
        if value.rank != 0:
            raise_error(
                f"tripy.masked_fill: value must be a number or a rank-0 tensor, but got a tensor of shape "
                f"{list(value.trace_tensor.shape)}.",
                info,
            )
        fill = cast(value, input.dtype)
    elif isinstance(value, (bool, int, float, np.number, np.bool_)):
        if input.dtype.is_integer and isinstance(value, (float, np.floating)) and not math.isfinite(value):
            raise_error(f"tripy.masked_fill: cannot fill a {input.dtype} tensor with {value}.", info)
        fill = constant(value, input.dtype, input.device)
    else:
        raise_error(f"tripy.masked_fill: value must be a number or a rank-0 tensor, not {type(value).__name__}.", info)
    return where(mask, fill, input)
