from typing import Any, Optional

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api
from tripy_frontend.ops.cast import cast
from tripy_frontend.ops.quantize import check_quantized_dtype, scale_operand
from tripy_frontend.ops.unary import FLOAT_TYPES, check_dtype
from tripy_frontend.tensor import Tensor


@public_api()
def dequantize(input: Tensor, scale: Any, dtype: dtypes.dtype, dim: Optional[int] = None) -> Tensor:
    """Dequantize an int8 or float8 tensor to the floating-point `dtype`: ``convert(x) * scale``.

    With ``dim=None`` the scale is per tensor (a number or a rank-0 tensor); with `dim` it is per
    channel (a 1-D tensor or a sequence with one value per entry of ``input.shape[dim]``). A scale
    tensor must have dtype `dtype`.

    Args:
        input: A tensor of dtype ``tp.int8`` or ``tp.float8``.
        scale: The scale: a tensor, a number or a sequence of numbers.
        dtype: ``tp.float32``, ``tp.float16`` or ``tp.bfloat16``.
        dim: The channel dim for per-channel dequantization, or None.

    Returns:
        A tensor of dtype `dtype`, shaped like `input`.

    .. code-block:: python

        q = tp.Tensor(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int8))
        out = tp.dequantize(q, [0.5, 2.0], tp.float32, dim=0)
        assert out.tolist() == [[0.5, 1.0, 1.5], [8.0, 10.0, 12.0]]
        assert tp.dequantize(q, 0.25, tp.float32).tolist()[0] == [0.25, 0.5, 0.75]
    """
    if not isinstance(input, Tensor):
        raise_error(f"tripy.dequantize expects a tripy.Tensor, but got {type(input).__name__}.", _stack.capture())
    check_quantized_dtype(input.dtype, "tripy.dequantize", "the input's dtype")
    if dtype not in FLOAT_TYPES:
        raise_error(f"tripy.dequantize: dtype must be tp.float32, tp.float16 or tp.bfloat16, but got {dtype}.",
                    _stack.capture())
    check_dtype(input, (dtypes.int8, dtypes.float8), "tripy.dequantize")
    return cast(input, dtype) * scale_operand(input, scale, dtype, dim, "tripy.dequantize")
