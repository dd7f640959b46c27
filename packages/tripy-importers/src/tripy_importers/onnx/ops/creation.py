"""ONNX operators that make new tensors: ConstantOfShape and Range."""

from __future__ import annotations

from typing import Any

import numpy as np

import tripy_frontend.ops.arange as _arange
import tripy_frontend.ops.full as _full
from tripy_flatir import dtypes
from tripy_frontend.tensor import Tensor
from tripy_importers.onnx.ops.registry import Dims, onnx_op

_FROM_NUMPY = {
    np.dtype(np.float32): dtypes.float32,
    np.dtype(np.float64): dtypes.float32,
    np.dtype(np.float16): dtypes.float16,
    np.dtype(np.int64): dtypes.int64,
    np.dtype(np.int32): dtypes.int32,
    np.dtype(np.bool_): dtypes.bool,
    np.dtype(np.int8): dtypes.int8,
}


@onnx_op("ConstantOfShape")
def constant_of_shape(shape: Dims, value: Any = None) -> Any:
    """A tensor of `shape` filled with `value` (a one-element array attribute; 0.0 as float32 when omitted)."""
    if value is None:
        value = np.zeros((1,), np.float32)
    dtype = _FROM_NUMPY[value.dtype]
    scalar = value.reshape(-1)[0].item()
    count = shape.ints()[0] if len(shape.values) == 1 and shape.static else 1 if not shape.values else -1
    if dtype in (dtypes.int32, dtypes.int64) and 0 <= count <= 64:  # (a shape value: kept as one)
        return Dims((int(scalar),) * count, not shape.values, dtype)
    return _full.full(list(shape.values), scalar, dtype)


@onnx_op("Range")
def range_(start: Any, limit: Any, delta: Any) -> Tensor:
    """``arange(start, limit, delta)``: the bounds are shape values (sizes), or constant tensors."""
    bounds = [v.values[0] if isinstance(v, Dims) else v.tolist() for v in (start, limit, delta)]
    dtype = start.dtype
    return _arange.arange(bounds[0], bounds[1], bounds[2], dtype)
