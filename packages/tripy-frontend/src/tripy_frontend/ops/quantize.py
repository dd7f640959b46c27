from typing import Any, Optional, Sequence

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.cast import cast
from tripy_frontend.ops.common import FLOAT_TYPES, NUMBER_TYPES, constant, normalize_dim
from tripy_frontend.ops.maximum import maximum
from tripy_frontend.ops.minimum import minimum
from tripy_frontend.ops.reshape import reshape
from tripy_frontend.tensor import Tensor
from tripy_trace.ops.unary_elementwise import Kind, UnaryElementwise

QUANTIZED_TYPES = (dtypes.int8, dtypes.float8)
# The representable range of each quantized type: values are clamped to it (saturating, as TensorRT does).
_RANGE = {dtypes.int8: (-128.0, 127.0), dtypes.float8: (-448.0, 448.0)}


def scale_operand(input: Tensor, scale: Any, scale_dtype: dtypes.dtype, dim: Optional[int], what: str) -> Tensor:
    """The scale as a tensor that broadcasts against `input`: rank 0 per tensor, or the channel dim's
    values placed at `dim` (size 1 elsewhere) per channel. (The dtype of a scale tensor is declared by
    each op and checked at the call.)"""
    info = _stack.capture()
    if isinstance(scale, Tensor):
        scale_t = scale
    elif isinstance(scale, NUMBER_TYPES):
        scale_t = constant(scale, scale_dtype, input.device)
    elif isinstance(scale, Sequence) and all(isinstance(s, NUMBER_TYPES) for s in scale):
        scale_t = Tensor(np.array(scale, dtype=np.float32), dtype=scale_dtype, device=input.device)
    else:
        raise_error(f"{what}: scale must be a tensor, a number or a sequence of numbers, not "
                    f"{type(scale).__name__}.", info)
    if dim is None:
        if scale_t.rank != 0:
            raise_error(f"{what}: per-tensor scaling (dim=None) needs a scalar scale, but the scale has shape "
                        f"{list(scale_t.trace_tensor.shape)}.", info,
                        ["Pass dim=<channel dim> for per-channel scaling with a 1-D scale."])
        return scale_t
    d = normalize_dim(dim, input.rank, what)
    if input.rank == 0 or scale_t.rank != 1:
        raise_error(f"{what}: per-channel scaling (dim={dim}) needs a 1-D scale and an input of rank >= 1, but the "
                    f"scale has shape {list(scale_t.trace_tensor.shape)} and the input has rank {input.rank}.", info)
    channels, size = input.trace_tensor.shape[d], scale_t.trace_tensor.shape[0]
    if channels >= 0 and size >= 0 and channels != size:
        raise_error(f"{what}: the scale has {size} values, but dim {d} of the input has size {channels}.", info,
                    ["Per-channel scaling needs one scale per channel."])
    return reshape(scale_t, tuple(scale_t.shape[0] if i == d else 1 for i in range(input.rank)))


@public_api(dtype_constraints={"input": "T1", "scale": "T1", "dtype": "T2", RETURN: "T2"},
            dtype_variables={"T1": FLOAT_TYPES, "T2": QUANTIZED_TYPES})
def quantize(input: Tensor, scale: Any, dtype: dtypes.dtype, dim: Optional[int] = None) -> Tensor:
    """Quantize `input` to `dtype` (``tp.int8`` or ``tp.float8``): ``convert(clamp(x / scale))``, with
    int8 values rounded half to even first. Values outside the range of `dtype` saturate (int8: [-128,
    127]; float8 (e4m3fn): [-448, 448]).

    With ``dim=None`` the quantization is per tensor and `scale` is a number or a rank-0 tensor. With
    `dim` it is per channel: `scale` is a 1-D tensor or a sequence with one value per entry of
    ``input.shape[dim]``. ``tp.int4`` is not supported (XLA:CPU cannot compile int4 arithmetic).

    Args:
        input: A floating-point tensor.
        scale: The scale: a tensor of the input's dtype, a number or a sequence of numbers.
        dtype: ``tp.int8`` or ``tp.float8``.
        dim: The channel dim for per-channel quantization, or None.

    Returns:
        A tensor of dtype `dtype`, shaped like `input`.

    .. code-block:: python

        x = tp.Tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 500.0]])
        q = tp.quantize(x, 0.5, tp.int8)
        assert q.dtype == tp.int8 and q.tolist() == [[0, 2, 4], [6, 8, 127]]
        q = tp.quantize(x, [1.0, 2.0], tp.int8, dim=0)
        assert q.tolist() == [[0, 1, 2], [2, 2, 127]]
    """
    scaled = input / scale_operand(input, scale, input.dtype, dim, "tripy.quantize")
    if dtype is dtypes.int8:
        scaled = Tensor._from_op(UnaryElementwise, [scaled], kind=Kind.ROUND)
    lo, hi = _RANGE[dtype]
    return cast(maximum(minimum(scaled, hi), lo), dtype)
