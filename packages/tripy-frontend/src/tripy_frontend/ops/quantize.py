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
from tripy_frontend.ops.expand import expand
from tripy_trace.ops.storage import Storage
from tripy_flatir.ops.round_nearest_even import RoundNearestEvenOp
from tripy_frontend.ops.unary import unary

QUANTIZED_TYPES = (dtypes.int4, dtypes.int8, dtypes.float8)
# The representable range of each quantized type: values are clamped to it (saturating, as TensorRT does).
_RANGE = {dtypes.int4: (-8.0, 7.0), dtypes.int8: (-128.0, 127.0), dtypes.float8: (-448.0, 448.0)}


def scale_operand(
    input: Tensor, scale: Any, scale_dtype: dtypes.dtype, dim: Optional[int], what: str, quantized: dtypes.dtype
) -> Tensor:
    """The scale as a tensor that broadcasts against `input`: rank 0 per tensor, the channel dim's values
    placed at `dim` (size 1 elsewhere) per channel, or (int4 only) a ``[blocks, D1]`` scale expanded to the
    ``[D0, D1]`` input block-wise. (The dtype of a scale tensor is declared by each op and checked at the call.)"""
    info = _stack.capture()
    if isinstance(scale, Tensor):
        if not isinstance(scale.trace_tensor.producer, Storage):  # as nvtripy 0.1.7 refuses it
            raise_error(
                f"{what}: the scale must be a constant: a tensor that holds data (tp.Tensor(...), a module "
                "parameter, an evaluated tensor), a number or a sequence of numbers; this one is computed "
                "by operations that have not run.",
                info,
                [
                    "Evaluate the scale first (scale.eval()), or pass its value. Inside tp.compile a scale "
                    "cannot depend on a runtime input."
                ],
                [scale.stack_info],
            )
        scale_t = scale
    elif isinstance(scale, NUMBER_TYPES):
        scale_t = constant(scale, scale_dtype, input.device)
    elif isinstance(scale, Sequence) and (
        all(isinstance(s, NUMBER_TYPES) for s in scale)
        or all(isinstance(r, Sequence) and all(isinstance(s, NUMBER_TYPES) for s in r) for r in scale)
    ):
        scale_t = Tensor(np.array(scale, dtype=np.float32), dtype=scale_dtype, device=input.device)
    else:
        raise_error(
            f"{what}: scale must be a tensor, a number or a sequence of numbers, not {type(scale).__name__}.", info
        )
    if dim is None and scale_t.rank == 2:
        return _block_scale(input, scale_t, quantized, what, info)
    if dim is None:
        if scale_t.rank != 0:
            raise_error(
                f"{what}: per-tensor scaling (dim=None) needs a scalar scale, but the scale has shape "
                f"{list(scale_t.trace_tensor.shape)}.",
                info,
                ["Pass dim=<channel dim> for per-channel scaling with a 1-D scale."],
            )
        return scale_t
    d = normalize_dim(dim, input.rank, what)
    if input.rank == 0 or scale_t.rank != 1:
        raise_error(
            f"{what}: per-channel scaling (dim={dim}) needs a 1-D scale and an input of rank >= 1, but the "
            f"scale has shape {list(scale_t.trace_tensor.shape)} and the input has rank {input.rank}.",
            info,
        )
    channels, size = input.trace_tensor.shape[d], scale_t.trace_tensor.shape[0]
    if channels >= 0 and size >= 0 and channels != size:
        raise_error(
            f"{what}: the scale has {size} values, but dim {d} of the input has size {channels}.",
            info,
            ["Per-channel scaling needs one scale per channel."],
        )
    return reshape(scale_t, tuple(scale_t.shape[0] if i == d else 1 for i in range(input.rank)))


def _block_scale(input: Tensor, scale: Tensor, quantized: dtypes.dtype, what: str, info: Any) -> Tensor:
    """A ``[blocks, D1]`` scale for a ``[D0, D1]`` input: rows ``i * D0 / blocks`` to ``(i + 1) * D0 / blocks - 1``
    share scale row i (nvtripy's block-wise int4 quantization)."""

    shape, blocks = input.trace_tensor.shape, scale.trace_tensor.shape
    if (
        quantized is not dtypes.int4
        or input.rank != 2
        or shape[0] < 0
        or blocks[0] <= 0
        or shape[0] % blocks[0]
        or blocks[1] != shape[1]
    ):
        raise_error(
            f"{what}: block-wise scaling (a 2-D scale) needs dtype int4, a 2-D input [D0, D1] and a scale "
            f"[blocks, D1] whose blocks divide D0, but got dtype {quantized}, an input of shape {list(shape)} "
            f"and a scale of shape {list(blocks)}.",
            info,
        )
    rows = shape[0] // blocks[0]
    return reshape(expand(reshape(scale, (blocks[0], 1, blocks[1])), (blocks[0], rows, blocks[1])), tuple(shape))


@public_api(
    document_under="ops_types",
    dtype_constraints={"input": "T1", "scale": "T1", "dtype": "T2", RETURN: "T2"},
    dtype_variables={"T1": FLOAT_TYPES, "T2": QUANTIZED_TYPES},
)
def quantize(input: Tensor, scale: Any, dtype: dtypes.dtype, dim: Optional[int] = None) -> Tensor:
    """Quantize `input` to `dtype` (``tp.int4``, ``tp.int8`` or ``tp.float8``): ``convert(clamp(x / scale))``,
    with integer values rounded half to even first. Values outside the range of `dtype` saturate (int4:
    [-8, 7]; int8: [-128, 127]; float8 (e4m3fn): [-448, 448]).

    With ``dim=None`` the quantization is per tensor and `scale` is a number or a rank-0 tensor, or, for
    ``tp.int4`` only, block-wise: a 2-D ``[D0, D1]`` input and a ``[blocks, D1]`` scale, where each block of
    ``D0 / blocks`` consecutive rows shares one row of scales. With `dim` it is per channel: `scale` is a
    1-D tensor or a sequence with one value per entry of ``input.shape[dim]``.

    Args:
        input: A floating-point tensor.
        scale: The scale: a constant (a tensor of the input's dtype that holds data, not one computed by
            operations that have not run), a number or a (nested) sequence of numbers.
        dtype: ``tp.int4``, ``tp.int8`` or ``tp.float8``.
        dim: The channel dim for per-channel quantization, or None.

    Returns:
        A tensor of dtype `dtype`, shaped like `input`.

    .. code-block:: python

        x = tp.Tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 500.0]])
        q = tp.quantize(x, 0.5, tp.int8)
        assert q.dtype == tp.int8 and q.tolist() == [[0, 2, 4], [6, 8, 127]]
        q = tp.quantize(x, [1.0, 2.0], tp.int8, dim=0)
        assert q.tolist() == [[0, 1, 2], [2, 2, 127]]
        w = tp.Tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 70.0]])
        q = tp.quantize(w, [[1.0, 1.0], [2.0, 4.0]], tp.int4)  # block-wise: 2 rows per block
        assert q.dtype == tp.int4 and q.tolist() == [[0, 1], [2, 3], [2, 1], [3, 7]]
    """
    scaled = input / scale_operand(input, scale, input.dtype, dim, "tripy.quantize", dtype)
    if dtype is not dtypes.float8:
        scaled = unary(scaled, RoundNearestEvenOp, "round")
    lo, hi = _RANGE[dtype]
    return cast(maximum(minimum(scaled, hi), lo), dtype)
